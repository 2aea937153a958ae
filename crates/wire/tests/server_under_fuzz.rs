//! The real server on loopback under a stream of malformed peers, while a normal client
//! keeps reading: garbage, mutated headers, half headers then close, headers dribbled
//! slower and faster than the header timeout, oversize requests, peers that vanish
//! mid-response, pipelined requests ending in garbage, and a burst of them all at once.
//! Throughout and afterwards the normal client gets every byte of every block, the accept
//! thread is alive, each bad peer got the answer its misbehaviour calls for, the counters
//! add up, and every connection thread ends.

use incast_wire::protocol::{Request, ResponseHeader, Status, HEADER_LEN};
use incast_wire::{read_blocks, ClientConfig, Server, ServerConfig};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Short enough for a test, long enough that a header dribbled over 0.2 s (24 bytes,
/// [`DRIBBLE_GAP`] apart) is on time even on a loaded 2-core machine.
const HEADER_TIMEOUT: Duration = Duration::from_millis(600);
const DRIBBLE_GAP: Duration = Duration::from_millis(8);
const MAX_REQUEST: u64 = 1 << 20;
const SRU: u64 = 256 * 1024;

/// A small deterministic generator (splitmix64): the same attack every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn ps(d: Duration) -> u64 {
    d.as_nanos() as u64 * 1000
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// The response on `s`: header and body, or None if the server closed (or reset) first.
fn response(s: &mut TcpStream) -> Option<(ResponseHeader, Vec<u8>)> {
    let mut h = [0u8; HEADER_LEN];
    s.read_exact(&mut h).ok()?;
    let h = ResponseHeader::decode(&h).expect("the server sent a malformed response header");
    let mut body = vec![0u8; h.length.min(4 << 20) as usize];
    s.read_exact(&mut body).ok()?;
    Some((h, body))
}

/// The error message the server sent on `s` before closing.
fn error_message(s: &mut TcpStream) -> String {
    match response(s) {
        Some((h, body)) if h.status == Status::Error => String::from_utf8(body).unwrap(),
        Some((h, _)) => panic!("expected an error response, got {h:?}"),
        None => panic!("the server closed without an error response"),
    }
}

fn assert_served(s: &mut TcpStream, size: u64, block: u64) {
    let (h, body) = response(s).expect("no response to a valid request");
    assert_eq!((h.status, h.length, h.block, body.len() as u64), (Status::Data, size, block, size));
}

/// What each kind of bad peer does, and what the server must answer.
#[derive(Clone, Copy, Debug)]
enum Attack {
    /// Random bytes (never starting like a request), then wait for the answer.
    Garbage,
    /// A valid header with one field broken.
    MutatedHeader,
    /// 1..23 bytes of a header, then close.
    HalfThenClose,
    /// A whole header one byte at a time, within the header timeout: served normally.
    DribbleInTime,
    /// A few header bytes, then silence past the header timeout.
    StallPastTimeout,
    /// A request over the server's maximum (or u64::MAX).
    Oversize,
    /// Ask for the maximum, read a little, vanish (reset mid-response).
    VanishMidResponse,
    /// Three valid requests in one write, then garbage; read only later.
    PipelinedThenGarbage,
    /// Connect and close at once.
    ConnectClose,
}

const ATTACKS: [Attack; 9] = [
    Attack::Garbage,
    Attack::MutatedHeader,
    Attack::HalfThenClose,
    Attack::DribbleInTime,
    Attack::StallPastTimeout,
    Attack::Oversize,
    Attack::VanishMidResponse,
    Attack::PipelinedThenGarbage,
    Attack::ConnectClose,
];

/// What the server's counters must show after one attack of each kind.
#[derive(Default, Debug, PartialEq)]
struct Expected {
    malformed: u64,
    header_timeouts: u64,
    refused_too_large: u64,
    peer_errors: u64,
}

impl Expected {
    fn add(&mut self, a: Attack) {
        match a {
            Attack::Garbage | Attack::MutatedHeader | Attack::HalfThenClose | Attack::PipelinedThenGarbage => {
                self.malformed += 1
            }
            Attack::StallPastTimeout => self.header_timeouts += 1,
            Attack::Oversize => self.refused_too_large += 1,
            Attack::VanishMidResponse => self.peer_errors += 1,
            Attack::DribbleInTime | Attack::ConnectClose => {}
        }
    }
}

fn attack(addr: SocketAddr, a: Attack, rng: &mut Rng) {
    let mut s = connect(addr);
    match a {
        Attack::Garbage => {
            let len = 1 + rng.below(4096) as usize;
            let mut g = rng.bytes(len);
            g[0] = b'X';
            if g.len() < HEADER_LEN {
                s.write_all(&g).unwrap();
                s.shutdown(Shutdown::Write).unwrap(); // a short tail: the server sees EOF mid-header
                assert!(response(&mut s).is_none(), "a truncated header is closed without an answer");
            } else {
                let _ = s.write_all(&g); // the server may close before reading it all
                let msg = error_message(&mut s);
                assert!(msg.contains("bad magic"), "{msg}");
            }
        }
        Attack::MutatedHeader => {
            let mut h = Request::data(rng.below(1000), rng.next()).encode();
            let (field, what) = match rng.below(4) {
                0 => (rng.below(4) as usize, "bad magic"),
                1 => (4, "version"),
                2 => (5, "kind"),
                _ => (6 + rng.below(2) as usize, "reserved"),
            };
            h[field] = h[field].wrapping_add(2 + rng.below(250) as u8);
            s.write_all(&h).unwrap();
            let msg = error_message(&mut s);
            assert!(msg.contains(what), "{msg}");
        }
        Attack::HalfThenClose => {
            let n = 1 + rng.below(HEADER_LEN as u64 - 1) as usize;
            s.write_all(&Request::data(10, 1).encode()[..n]).unwrap();
        }
        Attack::DribbleInTime => {
            let (size, block) = (rng.below(100_000), rng.next());
            for b in Request::data(size, block).encode() {
                s.write_all(&[b]).unwrap();
                thread::sleep(DRIBBLE_GAP);
            }
            assert_served(&mut s, size, block);
        }
        Attack::StallPastTimeout => {
            s.write_all(&Request::data(10, 1).encode()[..1 + rng.below(22) as usize]).unwrap();
            let msg = error_message(&mut s); // arrives after the header timeout
            assert!(msg.contains("header timeout"), "{msg}");
        }
        Attack::Oversize => {
            let size = if rng.below(2) == 0 { MAX_REQUEST + 1 } else { u64::MAX };
            s.write_all(&Request::data(size, 7).encode()).unwrap();
            let msg = error_message(&mut s);
            assert!(msg.contains(&size.to_string()) && msg.contains("exceeds"), "{msg}");
        }
        Attack::VanishMidResponse => {
            s.write_all(&Request::data(MAX_REQUEST, 1).encode()).unwrap();
            let mut some = [0u8; 1000];
            s.read_exact(&mut some).unwrap();
            // SO_LINGER 0 would be the harshest; dropping with unread data already resets.
        }
        Attack::PipelinedThenGarbage => {
            // Responses larger than the socket buffers hold, and more garbage than one
            // header, read late: the refusal must not reset what is still queued.
            let mut out = Vec::new();
            for block in 1..=3 {
                out.extend(Request::data(MAX_REQUEST - block, block).encode());
            }
            let garbage = HEADER_LEN + 1 + rng.below(1000) as usize;
            out.extend(rng.bytes(garbage));
            out[3 * HEADER_LEN] = b'X';
            s.write_all(&out).unwrap();
            thread::sleep(Duration::from_millis(50));
            for block in 1..=3 {
                assert_served(&mut s, MAX_REQUEST - block, block);
            }
            let msg = error_message(&mut s);
            assert!(msg.contains("bad magic"), "{msg}");
        }
        Attack::ConnectClose => {}
    }
}

fn normal_read(addr: SocketAddr, blocks: u64) {
    let mut cfg: ClientConfig = serde_json::from_str(r#"{"servers": []}"#).unwrap();
    cfg.servers = vec![addr.to_string(); 2];
    cfg.sru_bytes = SRU;
    cfg.blocks = blocks;
    cfg.block_timeout_ps = ps(Duration::from_secs(5));
    let r = read_blocks(cfg).expect("the normal client failed while the server was under attack");
    assert_eq!(r.payload_bytes, 2 * SRU * blocks);
    assert!(r.connections.iter().all(|c| c.payload_bytes == SRU * blocks));
}

#[test]
fn a_normal_client_reads_in_full_while_malformed_peers_hammer_the_server() {
    let t0 = Instant::now();
    let srv = Server::start(ServerConfig {
        listen: "127.0.0.1:0".into(),
        log: false,
        max_request_bytes: MAX_REQUEST,
        header_timeout_ps: ps(HEADER_TIMEOUT),
        idle_timeout_ps: ps(Duration::from_secs(10)),
        send_timeout_ps: ps(Duration::from_secs(2)),
        ..Default::default()
    })
    .unwrap();
    let addr = srv.local_addr();

    // Attackers: 4 threads, each every kind of attack in its own order, 6 rounds.
    const THREADS: u64 = 4;
    const ROUNDS: usize = 6;
    let mut want = Expected::default();
    let mut attackers = Vec::new();
    for t in 0..THREADS {
        let mut rng = Rng(t + 1);
        let mut plan = Vec::new();
        for _ in 0..ROUNDS {
            let mut round = ATTACKS.to_vec();
            for i in (1..round.len()).rev() {
                round.swap(i, rng.below(i as u64 + 1) as usize);
            }
            plan.extend(round);
        }
        plan.iter().for_each(|&a| want.add(a));
        attackers.push(thread::spawn(move || plan.into_iter().for_each(|a| attack(addr, a, &mut rng))));
    }

    // A burst: 300 connections open at once, each with a half header or garbage, then
    // all closed together while the attackers and the normal client run.
    let burst = {
        let mut rng = Rng(99);
        let mut conns = Vec::new();
        for i in 0..300 {
            let mut s = connect(addr);
            if i % 2 == 0 {
                s.write_all(&Request::data(10, 1).encode()[..1 + rng.below(22) as usize]).unwrap();
                want.malformed += 1; // truncated on close
            }
            conns.push(s);
        }
        conns
    };

    // The normal client reads again and again while the attack lasts (with a pause, so
    // that it does not take the attackers' CPU).
    let attacking = Arc::new(AtomicBool::new(true));
    let reader = {
        let attacking = attacking.clone();
        thread::spawn(move || {
            let mut runs = 0;
            while attacking.load(Ordering::SeqCst) || runs == 0 {
                normal_read(addr, 5);
                runs += 1;
                thread::sleep(Duration::from_millis(20));
            }
            runs
        })
    };
    thread::sleep(Duration::from_millis(200));
    drop(burst);
    for a in attackers {
        a.join().expect("an attacker saw the server answer wrongly");
    }
    attacking.store(false, Ordering::SeqCst);
    let runs = reader.join().expect("the normal client failed during the attack");
    assert!(runs >= 1);

    // Afterwards: still accepting, still serving, every connection thread gone.
    assert!(srv.is_running(), "the accept thread died");
    normal_read(addr, 5);
    let mut s = connect(addr);
    s.write_all(&Request::data(12_345, 42).encode()).unwrap();
    assert_served(&mut s, 12_345, 42);
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(3);
    while srv.stats().connections_open > 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let st = srv.stats();
    assert_eq!(st.connections_open, 0, "connection threads left behind: {st:?}");
    let got = Expected {
        malformed: st.malformed,
        header_timeouts: st.header_timeouts,
        refused_too_large: st.refused_too_large,
        peer_errors: st.peer_errors,
    };
    assert_eq!(got, want, "{st:?}");
    assert_eq!(st.refused_busy, 0);
    eprintln!(
        "{} attack connections + 300 burst, {runs} normal runs during the attack, {:.1} s: {st:?}",
        THREADS as usize * ROUNDS * ATTACKS.len(),
        t0.elapsed().as_secs_f64()
    );
}
