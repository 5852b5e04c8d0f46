//! Racetrack chapter 6: Hillis–Steele and Blelloch scans (under construction).
