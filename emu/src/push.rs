//! A push for the hot paths.

/// `v.push(value)`, written where the element goes. On the hot paths `Vec::push` was not
/// inlined: the value was built on the stack and copied into the vector with wider loads than
/// the stores that built it, which stalls (the race detector's batch, a store's lane list).
#[inline(always)]
pub(crate) fn push_in_place<T>(v: &mut Vec<T>, value: T) {
    v.reserve(1);
    if let Some(slot) = v.spare_capacity_mut().first_mut() {
        slot.write(value);
        // SAFETY: the element just past the length was written above.
        unsafe { v.set_len(v.len() + 1) };
    }
}
