//! The memory model racecheck follows: read by `exec` (how atomics acquire) and by `race` (which
//! pairs race), below both.

/// Which accesses racecheck reports (see `emu/README.md`, "Race detector").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemoryModel {
    /// PTX's data races, scopes included, and also conflicting volatile or relaxed accesses to
    /// data that nothing orders, an atomic beside such an access included; the pairs that are
    /// themselves synchronization (two atomics, and any strong pair on a word seen polled,
    /// acquired or released: a flag or a lock) are not reported. An atomic acquires with or
    /// without a fence after it.
    #[default]
    Racecheck,
    /// Exactly PTX's data races: morally strong pairs never race, and an atomic acquires only
    /// with `.acquire` or a fence after it.
    Ptx,
}
