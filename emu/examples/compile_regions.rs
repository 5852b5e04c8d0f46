//! What the compiled tier takes of PTX files, and what compiling it costs: per file, its
//! instructions, the regions and the instructions they cover, and the milliseconds Cranelift
//! took (once per module; later launches reuse the regions).
//!
//! ```text
//! cargo run --release -p ptx-emu --example compile_regions -- FILE.ptx...
//! ```

use ptx_emu::Module;
use std::error::Error;
use std::time::Instant;

fn main() -> Result<(), Box<dyn Error>> {
    println!("| file | regions | instructions in them | compile ms |");
    println!("|---|---:|---:|---:|");
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let module = Module::parse(&text).map_err(|e| format!("{path}: {e}"))?;
        let start = Instant::now();
        let (regions, covered) = module.compiled_regions();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        println!("| {path} | {regions} | {covered} | {ms:.1} |");
    }
    Ok(())
}
