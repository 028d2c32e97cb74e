//! The definition a reference binds to, by glibc's rule (`_dl_lookup_symbol_x`
//! over a reference's scopes, `elf/dl-lookup.c`), read from the loaded objects:
//!
//! 1. an object linked `-Bsymbolic` binds its own references to its own
//!    definitions first;
//! 2. then the global scope: the program, the objects preloaded with it
//!    (`LD_PRELOAD`: loaded right after it), and everything they need, breadth
//!    first (`DT_NEEDED`), in load order;
//! 3. then the referring object's own scope: itself and what it needs, breadth
//!    first (an object `dlopen`ed `RTLD_LOCAL` sees its own dependencies there);
//! 4. then any other loaded object defining it: one `dlopen`ed `RTLD_GLOBAL`
//!    (which joins the global scope), the one place this reading cannot tell a
//!    global object from another's local one.
//!
//! The first object in that order that exports a definition wins. An interposer
//! asks for the definition its caller would reach without it: the first after the
//! interposer in that order (a call that reached it found nothing before it, or
//! came through `dlsym(RTLD_NEXT)` from a wrapper before it), leaving out the
//! objects it names (its own copies).
//! `RTLD_DEEPBIND` (the local scope first) is not visible from outside the loader.

use std::ops::{ControlFlow, Range};

use super::object::Object;
use super::symbols::gnu_hash;
use super::walk::each_object;

/// A definition a reference binds to.
pub struct Bound<E> {
    /// Its address.
    pub address: usize,
    /// What the caller's `inspect` read of the defining object.
    pub inspected: E,
}

/// What the walk keeps of one object; its names are ranges of [`Walked::text`].
struct Node<E> {
    file_name: Range<usize>,
    soname: Option<Range<usize>>,
    /// Its `DT_NEEDED` names: a range of [`Walked::needed`].
    needed: Range<usize>,
    symbolic: bool,
    is_program: bool,
    holds_interposer: bool,
    definition: Option<Bound<E>>,
}

/// The loaded objects as one walk found them, in load order. Every allocation may
/// fail (a process out of memory gets no answer, not an abort).
struct Walked<E> {
    nodes: Vec<Node<E>>,
    text: Vec<u8>,
    needed: Vec<Range<usize>>,
}

impl<E> Walked<E> {
    fn text(&mut self, bytes: &[u8]) -> Option<Range<usize>> {
        self.text.try_reserve(bytes.len()).ok()?;
        let start = self.text.len();
        self.text.extend_from_slice(bytes);
        Some(start..self.text.len())
    }

    /// Adds `object`; None when memory runs out.
    fn add(
        &mut self,
        object: &Object,
        interposer: usize,
        definition: Option<Bound<E>>,
    ) -> Option<()> {
        let file_name = self.text(object.name().to_bytes())?;
        let soname = match object.soname() {
            Some(soname) => Some(self.text(soname)?),
            None => None,
        };
        let first_needed = self.needed.len();
        for needed in object.needed() {
            let needed = self.text(needed)?;
            self.needed.try_reserve(1).ok()?;
            self.needed.push(needed);
        }
        self.nodes.try_reserve(1).ok()?;
        self.nodes.push(Node {
            file_name,
            soname,
            needed: first_needed..self.needed.len(),
            symbolic: object.is_symbolic(),
            is_program: object.is_program(),
            holds_interposer: object.holds(interposer),
            definition,
        });
        Some(())
    }
}

/// The names each walked object answers to, as the loader matches a `DT_NEEDED`
/// name: its soname, its file name, or the same last component; sorted by their
/// hash, then by load order, so that a name is found in a logarithmic number of
/// steps (the first object in load order of those answering to it), and sorting
/// compares numbers, not names.
struct Names(Vec<(u32, Range<usize>, usize)>);

impl Names {
    fn of<E>(walked: &Walked<E>) -> Option<Self> {
        let mut names = Vec::new();
        names.try_reserve(3 * walked.nodes.len()).ok()?;
        let hashed =
            |range: Range<usize>, index| (gnu_hash(&walked.text[range.clone()]), range, index);
        for (index, node) in walked.nodes.iter().enumerate() {
            let file_name = node.file_name.clone();
            if !file_name.is_empty() {
                let last = last_component(&walked.text[file_name.clone()]).len();
                names.push(hashed(file_name.end - last..file_name.end, index));
                names.push(hashed(file_name, index));
            }
            names.extend(node.soname.clone().map(|soname| hashed(soname, index)));
        }
        names.sort_unstable_by_key(|&(hash, _, index)| (hash, index));
        Some(Self(names))
    }

    /// The first object (in load order) answering to `needed`, or its last component.
    fn find(&self, text: &[u8], needed: &[u8]) -> Option<usize> {
        let find = |name: &[u8]| {
            let hash = gnu_hash(name);
            let at = self.0.partition_point(|&(other, _, _)| other < hash);
            self.0[at..]
                .iter()
                .take_while(|&&(other, _, _)| other == hash)
                .find(|(_, range, _)| &text[range.clone()] == name)
                .map(|&(_, _, index)| index)
        };
        find(needed).or_else(|| find(last_component(needed)))
    }
}

/// What follows a path's last `/`.
fn last_component(path: &[u8]) -> &[u8] {
    path.rsplit(|&byte| byte == b'/').next().unwrap_or(path)
}

/// The definition of `name` that a reference from the object holding `caller`
/// binds to without the interposer whose code lies at `interposer` (see the
/// module's rule), leaving out every object `skip` names: its address and what
/// `inspect` reads of that object; beside it what `inspect_caller` reads of the
/// caller's object, if one holds `caller`. One walk of the loaded objects, with one
/// hash lookup in each. `Err` when memory runs out.
#[allow(clippy::type_complexity)]
pub fn bind<E, C>(
    caller: usize,
    interposer: usize,
    name: &[u8],
    skip: impl Fn(&Object) -> bool,
    inspect: impl Fn(&Object) -> E,
    inspect_caller: impl FnOnce(&Object) -> C,
) -> Result<(Option<C>, Option<Bound<E>>), OutOfMemory> {
    let mut walked = Walked {
        nodes: Vec::new(),
        text: Vec::new(),
        needed: Vec::new(),
    };
    let (mut caller_at, mut caller_read, mut failed) = (None, None, false);
    let mut inspect_caller = Some(inspect_caller);
    each_object(|object| {
        if caller_at.is_none() && object.holds(caller) {
            caller_at = Some(walked.nodes.len());
            caller_read = inspect_caller.take().map(|read| read(object));
        }
        let definition = match skip(object) {
            true => None,
            false => object.lookup(name).map(|symbol| Bound {
                address: symbol.address,
                inspected: inspect(object),
            }),
        };
        failed = walked.add(object, interposer, definition).is_none();
        match failed {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        }
    });
    let order = (!failed)
        .then(|| lookup_order(&walked, caller_at))
        .flatten();
    let Some((order, in_scope)) = order else {
        return Err(OutOfMemory);
    };
    // Only an interposer in the caller's scope was reached by binding.
    let past_interposer = order[..in_scope]
        .iter()
        .position(|&index| walked.nodes[index].holds_interposer)
        .map_or(0, |at| at + 1);
    let first = order[past_interposer..]
        .iter()
        .copied()
        .find(|&index| walked.nodes[index].definition.is_some());
    let bound = first.and_then(|index| walked.nodes.swap_remove(index).definition);
    Ok((caller_read, bound))
}

/// Memory ran out while the loaded objects were read.
#[derive(Debug)]
pub struct OutOfMemory;

/// The indexes of the walked objects in the order a reference from `caller`'s
/// object searches them, and how many of the first are its scope (the others are
/// the objects it may see only if they were loaded `RTLD_GLOBAL`); None when memory
/// runs out.
fn lookup_order<E>(walked: &Walked<E>, caller: Option<usize>) -> Option<(Vec<usize>, usize)> {
    let count = walked.nodes.len();
    let names = Names::of(walked)?;
    let mut order = Vec::new();
    order.try_reserve(3 * count).ok()?;
    if let Some(caller) = caller.filter(|&caller| walked.nodes[caller].symbolic) {
        order.push(caller);
    }
    order.extend(global_scope(walked, &names)?);
    if let Some(caller) = caller {
        order.extend(breadth_first(walked, &names, caller..caller + 1)?);
    }
    let mut seen = Vec::new();
    seen.try_reserve(count).ok()?;
    seen.resize(count, false);
    order.retain(|&index| !std::mem::replace(&mut seen[index], true));
    let in_scope = order.len();
    order.extend((0..count).filter(|&index| !seen[index]));
    Some((order, in_scope))
}

/// The objects loaded with the program, in the global scope's order: the program,
/// its preloads (the objects listed between it and the first it needs), and what
/// they all need, breadth first.
fn global_scope<E>(walked: &Walked<E>, names: &Names) -> Option<Vec<usize>> {
    if !walked
        .nodes
        .first()
        .is_some_and(|program| program.is_program)
    {
        return Some(Vec::new());
    }
    let needed_by_program = breadth_first(walked, names, 0..1)?;
    let first_needed = needed_by_program
        .get(1)
        .copied()
        .unwrap_or(walked.nodes.len());
    breadth_first(walked, names, 0..first_needed)
}

/// `start` and everything it needs, breadth first, each once.
fn breadth_first<E>(walked: &Walked<E>, names: &Names, start: Range<usize>) -> Option<Vec<usize>> {
    let count = walked.nodes.len();
    let (mut seen, mut queue) = (Vec::new(), Vec::new());
    seen.try_reserve(count).ok()?;
    queue.try_reserve(count).ok()?;
    seen.resize(count, false);
    for index in start {
        seen[index] = true;
        queue.push(index);
    }
    let mut next = 0;
    while let Some(&index) = queue.get(next) {
        next += 1;
        for needed in &walked.needed[walked.nodes[index].needed.clone()] {
            let needed = &walked.text[needed.clone()];
            if let Some(found) = names.find(&walked.text, needed) {
                if !std::mem::replace(&mut seen[found], true) {
                    queue.push(found);
                }
            }
        }
    }
    Some(queue)
}

#[cfg(test)]
mod tests {
    use super::{lookup_order, Bound, Node, Walked};

    /// Objects of (file name, needed names, defines the name, symbolic).
    fn walked(objects: &[(&str, &[&str], bool, bool)]) -> Walked<()> {
        let mut walked = Walked {
            nodes: Vec::new(),
            text: Vec::new(),
            needed: Vec::new(),
        };
        for &(file_name, needed, defines, symbolic) in objects {
            let file_name = walked.text(file_name.as_bytes()).unwrap();
            let first = walked.needed.len();
            for name in needed {
                let name = walked.text(name.as_bytes()).unwrap();
                walked.needed.push(name);
            }
            walked.nodes.push(Node {
                is_program: file_name.is_empty(),
                file_name,
                soname: None,
                needed: first..walked.needed.len(),
                symbolic,
                holds_interposer: false,
                definition: defines.then_some(Bound {
                    address: 1,
                    inspected: (),
                }),
            });
        }
        walked
    }

    #[test]
    fn global_scope_then_the_callers_own() {
        // The program, a preload, libc; then a plugin loaded RTLD_LOCAL with its
        // LevelDB, then another plugin.
        let walked = walked(&[
            ("", &["libc.so.6"], false, false),
            ("/pre/libpreload.so", &["libc.so.6"], false, false),
            ("/lib/libc.so.6", &[], false, false),
            (
                "/p/plugin.so",
                &["libleveldb.so.1d", "libc.so.6"],
                false,
                false,
            ),
            ("/lib/libleveldb.so.1d", &["libc.so.6"], true, false),
            ("/p/other.so", &[], false, false),
        ]);
        assert_eq!(
            lookup_order(&walked, Some(3)),
            Some((vec![0, 1, 2, 3, 4, 5], 5))
        );
        assert_eq!(
            lookup_order(&walked, Some(5)),
            Some((vec![0, 1, 2, 5, 3, 4], 4))
        );
        assert_eq!(
            lookup_order(&walked, None),
            Some((vec![0, 1, 2, 3, 4, 5], 3))
        );
    }

    #[test]
    fn a_symbolic_object_first() {
        let walked = walked(&[
            ("", &["libleveldb.so.1d"], false, false),
            ("/lib/libleveldb.so.1d", &[], true, false),
            ("/p/builtin.so", &[], true, true),
        ]);
        assert_eq!(lookup_order(&walked, Some(2)), Some((vec![2, 0, 1], 3)));
        assert_eq!(lookup_order(&walked, Some(1)), Some((vec![0, 1, 2], 2)));
    }
}
