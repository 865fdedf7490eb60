//! Run limits (simulated time, wall time, events, output) and the streaming output hook.

use memtwin_scenario::{Limits, RunOptions, RunResult, StopReason};
use std::sync::{Arc, Mutex};

fn run_with(text: &str, limits: Limits, hook: Option<memtwin_scenario::OutputHook>) -> RunResult {
    memtwin_scenario::run_streaming(
        &RunOptions { script_text: Some(text.into()), machine: "default".into(), sets: vec!["ram=1G".into()], limits, ..Default::default() },
        hook,
    )
    .expect("runs")
}

const LONG: &str = "free -m\nvmstat 1 1000000\necho never\n";

#[test]
fn simulated_time_limit_stops_the_run_and_keeps_what_it_printed() {
    let r = run_with(LONG, Limits { max_sim_ns: 5_000_000_000, ..Default::default() }, None);
    let (reason, msg) = r.stopped.clone().expect("stopped");
    assert_eq!(reason, StopReason::SimTime);
    assert_eq!(msg, "simulated-time limit of 5 s reached at 5.000 s of simulated time; stopped (--max-sim-time)");
    assert!(r.transcript.starts_with("# free -m\n"));
    assert!(r.transcript.contains("# vmstat 1 1000000\n"));
    assert!(!r.transcript.contains("never"));
    // vmstat's header and one line per second up to the limit.
    let lines = r.transcript.lines().filter(|l| l.starts_with(" 1 ") || l.starts_with(" 0 ")).count();
    assert!((4..=6).contains(&lines), "{lines} vmstat lines:\n{}", r.transcript);
    assert_eq!(r.sim_seconds, 5.0);
    assert_eq!(*r.series.t_s.last().unwrap(), 5.0);
}

#[test]
fn default_limit_is_one_week_of_simulated_time() {
    assert_eq!(Limits::default().max_sim_ns, 7 * 24 * 3600 * 1_000_000_000);
    let r = run_with("sleep 8d\necho never\n", Limits::default(), None);
    assert_eq!(r.stopped.map(|s| s.0), Some(StopReason::SimTime));
    assert_eq!(r.sim_seconds, 7.0 * 24.0 * 3600.0);
}

#[test]
fn event_limit_stops_the_run() {
    let r = run_with(LONG, Limits { max_events: 1000, ..Default::default() }, None);
    let (reason, msg) = r.stopped.expect("stopped");
    assert_eq!(reason, StopReason::Events);
    assert!(msg.starts_with("event limit of 1000 kernel events reached at "), "{msg}");
    assert!(msg.ends_with("; stopped (--max-events)"), "{msg}");
    assert!(r.transcript.contains("# vmstat 1 1000000\n"));
}

#[test]
fn output_limit_stops_a_command_that_prints_without_end() {
    let r = run_with(LONG, Limits { max_output: 4096, ..Default::default() }, None);
    let (reason, msg) = r.stopped.expect("stopped");
    assert_eq!(reason, StopReason::Output);
    assert!(msg.starts_with("output limit of 4096 bytes reached at "), "{msg}");
    assert!(r.transcript.len() > 4096 && r.transcript.len() < 4096 + 1024, "{}", r.transcript.len());
}

#[test]
fn output_limit_counts_redirected_output() {
    let r = run_with("vmstat 1 1000000 > /root/out\n", Limits { max_output: 4096, ..Default::default() }, None);
    assert_eq!(r.stopped.map(|s| s.0), Some(StopReason::Output));
    assert_eq!(r.transcript, "# vmstat 1 1000000 > /root/out\n");
}

#[test]
fn wall_limit_stops_the_run() {
    // A zero wall-time budget is spent at the first look at the clock.
    let r = run_with(LONG, Limits { max_wall: Some(std::time::Duration::ZERO), ..Default::default() }, None);
    let (reason, msg) = r.stopped.expect("stopped");
    assert_eq!(reason, StopReason::Wall);
    assert!(msg.starts_with("wall-time limit of 0 s reached at "), "{msg}");
    assert!(r.transcript.starts_with("# free -m\n"));
}

#[test]
fn a_run_within_its_limits_is_not_stopped() {
    // Ending exactly at the limit is within it.
    let r = run_with("sleep 3\n", Limits { max_sim_ns: 3_000_000_000, ..Default::default() }, None);
    assert_eq!(r.stopped, None);
}

#[test]
fn the_hook_receives_the_transcript_in_pieces_while_the_run_goes_on() {
    let pieces = Arc::new(Mutex::new(Vec::<String>::new()));
    let hook = {
        let pieces = Arc::clone(&pieces);
        Box::new(move |t: &str| {
            pieces.lock().unwrap().push(t.to_string());
            true
        })
    };
    let r = run_with("free -m\nsleep 2\nvmstat 1 3\nfree -m\n", Limits::default(), Some(hook));
    let pieces = pieces.lock().unwrap();
    assert_eq!(pieces.concat(), r.transcript);
    // One piece at least per top-level command: the first holds free's output only.
    let nonempty: Vec<&String> = pieces.iter().filter(|p| !p.is_empty()).collect();
    assert!(nonempty.len() >= 3, "{pieces:?}");
    assert!(nonempty[0].starts_with("# free -m\n") && !nonempty[0].contains("vmstat"), "{:?}", nonempty[0]);
}

#[test]
fn a_hook_that_refuses_interrupts_the_run_keeping_what_was_printed() {
    let calls = Arc::new(Mutex::new(0));
    let hook = {
        let calls = Arc::clone(&calls);
        Box::new(move |_: &str| {
            *calls.lock().unwrap() += 1;
            false
        })
    };
    let r = run_with(LONG, Limits::default(), Some(hook));
    assert_eq!(r.stopped.map(|s| s.0), Some(StopReason::Interrupted));
    assert_eq!(*calls.lock().unwrap(), 1);
    assert!(r.transcript.starts_with("# free -m\n"));
    assert!(!r.transcript.contains("vmstat"));
}
