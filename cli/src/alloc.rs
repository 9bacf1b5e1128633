//! The binary's allocator, mimalloc (docs/decisions.md: v2, without transparent huge pages),
//! and the one call into it that a long-lived `agentx serve` needs: the crate's only `unsafe`.

#![allow(unsafe_code)]

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// mimalloc's own C function, from the static library `libmimalloc-sys` builds and links into
// this binary (through the `mimalloc` crate); declared here rather than through that crate's
// `extended` feature, which would pull in one more crate (`cty`) for this one signature,
// `void mi_collect(bool force)`, unchanged since mimalloc 1.0.
extern "C" {
    fn mi_collect(force: bool);
}

/// Gives back to the system at once what mimalloc holds freed: this thread's free pages, the
/// segments of threads that have ended, the arenas' free ranges — which it otherwise returns
/// only when the thread that freed them allocates again (`agentx serve`: issue 50 item 11).
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub fn give_back() {
    // SAFETY: `mi_collect` takes no pointer and may be called on any thread at any time
    // (mimalloc's documentation: "eagerly free memory"); it releases only memory that no
    // allocation holds, so no reference of ours is touched.
    unsafe { mi_collect(true) }
}
