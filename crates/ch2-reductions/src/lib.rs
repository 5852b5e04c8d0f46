//! Racetrack chapter 2: shared memory, barriers and 1D/2D reductions (under construction).
