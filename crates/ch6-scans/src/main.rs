fn main() {
    eprintln!("error: ch6-scans is under construction");
    std::process::exit(1);
}
