//! PTX emulator (under construction).
