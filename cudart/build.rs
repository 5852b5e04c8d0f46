//! The runtime answers to the name and symbol versions of NVIDIA's: a program linked against
//! `libcudart.so.13` asks for `cudaMalloc@libcudart.so.13`. GNU ld's `--default-symver` gives every
//! exported symbol the soname as its version, as NVIDIA's library has; rust-lld has no such flag.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-fuse-ld=bfd");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.13");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--default-symver");
}
