//! Every function this library exports to C, and nothing else: each is exactly one
//! panic boundary ([`guard`](super::guard)) around the layers below.

mod filters;
mod policies;
mod stats;
// Last, so that the header gives each alias after the functions it names.
mod aliases;
