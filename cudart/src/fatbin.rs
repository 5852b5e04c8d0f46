//! nvcc's fatbinary: the device code a program carries (PTX and cubins, often compressed), found
//! through the wrapper that `__cudaRegisterFatBinary` receives or in an executable's `.nv_fatbin`.
