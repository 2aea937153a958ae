pub mod stream_script;
