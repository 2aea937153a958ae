//! Run scenarios given as JSON lines on stdin; print one result JSON per line.
//! A developer tool for quick looks at the core without the Python front.
use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        if line.trim().is_empty() {
            continue;
        }
        let spec: incast_sim::ScenarioSpec = serde_json::from_str(&line).expect("scenario JSON");
        match incast_sim::run(&spec) {
            Ok(r) => println!("{}", serde_json::to_string(&r).unwrap()),
            Err(e) => eprintln!("error: {e}"),
        }
    }
}
