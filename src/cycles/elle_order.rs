//! The order in which Elle visits the operations of a graph.
//!
//! Elle's dependency graphs are Bifurcan hash structures keyed by completion
//! operation, and operations hash by their `:index` alone (Clojure's Murmur3
//! `hashLong`). Bifurcan stores a set as a CHAMP trie: it folds the 64-bit
//! hash to 32 bits, spreads it (`h ^= h>>>20 ^ h>>>12; h ^= h>>>7 ^ h>>>4`),
//! and consumes it five bits at a time from the low end. Iteration visits a
//! trie node's own entries in the order of their five-bit chunk, then its
//! child nodes in the same order, depth first.
//!
//! Elle starts its cycle searches from the vertices in that order and expands
//! each vertex's successors in that order too, so the order decides which
//! transaction an explanation calls `T1` and, among equally short cycles,
//! which one is reported. Nothing about a verdict depends on it; we follow it
//! so that a witness reads exactly as Elle's would. The corpus pins it: in
//! `la-core-g2-explanation` Elle names op 8 before op 7, and in the monotonic
//! `elle.core` examples op 7 before op 3 and op 0 before op 1, which is what
//! this order gives.

use crate::clojure_hash::hash_long;

/// The 32-bit hash Bifurcan files an operation under: Clojure's hash of its
/// `:index`, widened to a long, folded and spread as Bifurcan's `Map` does.
pub fn bifurcan_hash(index: i64) -> u32 {
    let wide = hash_long(index) as i64;
    let mut h = ((wide >> 32) ^ wide) as u32;
    h ^= (h >> 20) ^ (h >> 12);
    h ^= (h >> 7) ^ (h >> 4);
    h
}

/// Reorders `items` into Bifurcan's iteration order of the set of their
/// `:index` values. Items with equal hashes (a 32-bit collision) keep their
/// relative order, as Bifurcan's collision nodes keep insertion order.
pub fn elle_order<T: Copy>(items: &mut [T], index: impl Fn(&T) -> i64) {
    if items.len() < 2 {
        return;
    }
    let mut keyed: Vec<(u32, T)> = items.iter().map(|x| (bifurcan_hash(index(x)), *x)).collect();
    let mut out = Vec::with_capacity(items.len());
    trie_order(&mut keyed, 0, &mut out);
    items.copy_from_slice(&out);
}

/// Appends the items of one trie node (all sharing the hash bits below
/// `shift`) to `out` in iteration order.
fn trie_order<T: Copy>(node: &mut [(u32, T)], shift: u32, out: &mut Vec<T>) {
    if shift >= 32 || node.iter().all(|&(h, _)| h == node[0].0) {
        // A collision node: its entries in the order they arrived.
        out.extend(node.iter().map(|&(_, x)| x));
        return;
    }
    let chunk = |h: u32| (h >> shift) & 31;
    node.sort_by_key(|&(h, _)| chunk(h));
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 1..=node.len() {
        if i == node.len() || chunk(node[i].0) != chunk(node[start].0) {
            runs.push((start, i));
            start = i;
        }
    }
    // The node's own entries (a chunk held by one item) come first...
    for &(a, b) in &runs {
        if b - a == 1 {
            out.push(node[a].1);
        }
    }
    // ...then each child node, in chunk order.
    for &(a, b) in &runs {
        if b - a > 1 {
            trie_order(&mut node[a..b], shift + 5, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered(indices: &[i64]) -> Vec<i64> {
        let mut v = indices.to_vec();
        elle_order(&mut v, |&i| i);
        v
    }

    #[test]
    fn matches_the_orders_elle_shows_in_its_explanations() {
        // la-core-g2-explanation: T1 is op 8.
        assert_eq!(ordered(&[7, 8]), vec![8, 7]);
        // elle.core monotonic examples: op 7 before op 3, op 0 before op 1.
        assert_eq!(ordered(&[3, 7]), vec![7, 3]);
        assert_eq!(ordered(&[1, 0]), vec![0, 1]);
    }

    #[test]
    fn is_a_permutation_and_ignores_input_order() {
        let a: Vec<i64> = (0..500).map(|i| i * 7 + 3).collect();
        let mut b = a.clone();
        b.reverse();
        let (oa, ob) = (ordered(&a), ordered(&b));
        assert_eq!(oa, ob);
        let mut sorted = oa.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, a);
    }

    #[test]
    fn entries_precede_child_nodes() {
        // Two indices sharing their low chunk form a child node, which comes
        // after an index alone in a higher chunk.
        let idx: Vec<i64> = (0..64).collect();
        let hs: Vec<u32> = idx.iter().map(|&i| bifurcan_hash(i)).collect();
        let mut pair = None;
        'outer: for i in 0..64 {
            for j in i + 1..64 {
                if hs[i] & 31 == hs[j] & 31 {
                    for k in 0..64 {
                        if hs[k] & 31 > hs[i] & 31 {
                            pair = Some((i, j, k));
                            break 'outer;
                        }
                    }
                }
            }
        }
        let (i, j, k) = pair.expect("some chunk is shared among 64 hashes");
        let o = ordered(&[i as i64, j as i64, k as i64]);
        assert_eq!(o[0], k as i64, "the lone entry comes before the child node");
    }
}
