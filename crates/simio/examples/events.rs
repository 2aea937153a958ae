//! Run one scenario (JSON on stdin) and write its per-event trace (ns-3 peer format) to
//! the path given as the first argument; print the result JSON. A developer tool for
//! diffing against a peer simulator without the Python front.
use std::io::Read;

fn main() {
    let path = std::env::args().nth(1).expect("usage: events OUT.csv < scenario.json");
    let mut json = String::new();
    std::io::stdin().read_to_string(&mut json).expect("stdin");
    let spec: incast_sim::ScenarioSpec = serde_json::from_str(&json).expect("scenario JSON");
    let sc = spec.validate().unwrap_or_else(|e| panic!("{e}"));
    let req = incast_simio::FileRequest { events: Some(path.into()), ..Default::default() };
    let (result, _) = incast_simio::simulate_to_files(&sc, &req).expect("run and write");
    println!("{}", serde_json::to_string(&result).unwrap());
}
