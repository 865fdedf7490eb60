//! `cargo run --release -p memtwin-scenario --example replay -- TRACE CACHE_PAGES [off] [SET...]`:
//! the kernel-policy replay without the Python layer (prints the result's fields).
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 2 {
        eprintln!("usage: replay TRACE CACHE_PAGES [on|off] [KEY=VALUE...]");
        std::process::exit(2);
    }
    let format = memtwin_cachesim::Format::from_path(&a[0]).unwrap_or(memtwin_cachesim::Format::U64);
    let o = memtwin_scenario::replay::KernelReplay {
        path: a[0].clone(),
        format,
        machine: "default".into(),
        sets: a.iter().skip(3).cloned().collect(),
        cache_pages: a[1].parse().ok(),
        readahead: a.get(2).map_or(true, |s| s != "off"),
        seed: 0,
    };
    match memtwin_scenario::replay::replay_kernel(&o) {
        Ok(r) => println!("{r:#?}"),
        Err(e) => {
            eprintln!("replay: {}", e.message);
            std::process::exit(2);
        }
    }
}
