// Windowed bit-matrix reachability for pruning (isolde, src/accel), band
// layout.
//
// Nodes of the begin/commit graph are numbered in a topological order; the
// window is 64*words positions. Columns are grouped in absolute words (word
// w = positions 64w .. 64w+63). Row p covers columns [p, p + 64*words),
// i.e. absolute words p/64 ..= p/64 + words, stored at slots 0..=words of a
// stride of words + 1; bit c of word w set when p reaches 64w + c. Nothing
// is shifted, so word w of row p is the OR over successors s of word w of
// row s (plus bit s), masked to p's band: columns are independent.
//
// The host (src/accel/gpu.rs) launches `closure_band` once per closure (one
// thread per column word, each sweeping the rows that touch its word by
// descending position; no synchronisation at all, as a thread reads only
// words it wrote itself), `test_sides` once per pruning round, and
// `insert_edge` once per derived edge when the closure is updated in place.
// src/accel/bitreach.rs is the CPU mirror: the same formulas (band_mask,
// rows_touching, succ_word), rayon over column blocks, bit for bit the same
// rows.

typedef unsigned long long u64;
typedef unsigned int u32;

// bitreach::band_mask: the bits of absolute word w that row p may hold.
__device__ __forceinline__ u64 band_mask(u64 p, u32 words, u64 w) {
    return (w - p / 64 == words) ? ((1ull << (p % 64)) - 1) : ~0ull;
}

// One thread per absolute column word w < columns: rows p from
// min(64w + 64, n) - 1 down to max(64w + 1 - 64*words, 0), each word the
// masked OR of its successors' words w (bitreach::succ_word). The threads of
// a block (one warp, consecutive words) walk the union of their row ranges
// in step, each computing only its own rows: at every step they read the
// same plan entries (one broadcast load) and adjacent words of the same
// successor rows (one coalesced load), and write adjacent words. A thread
// still reads only words it wrote itself, so nothing synchronises; the rows
// are those of the mirror, bit for bit (the same words in the same order
// per column).
extern "C" __global__ void closure_band(u64* rows, const u32* offsets, const u32* targets, u32 n, u32 words,
                                        u32 columns) {
    u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 first = (u64)blockIdx.x * blockDim.x;
    u64 last = first + blockDim.x - 1 < columns ? first + blockDim.x - 1 : (u64)columns - 1;
    u64 stride = (u64)words + 1;
    u64 win = (u64)words * 64;
    u64 lo = (64 * w + 1 > win) ? 64 * w + 1 - win : 0;
    u64 hi = 64 * w + 64 < n ? 64 * w + 64 : n;
    // The block's rows: from the first word's lowest to the last word's highest.
    u64 block_lo = (64 * first + 1 > win) ? 64 * first + 1 - win : 0;
    u64 block_hi = 64 * last + 64 < n ? 64 * last + 64 : n;
    bool mine_at_all = w < columns;
    for (u64 p = block_hi; p-- > block_lo;) {
        if (!mine_at_all || p < lo || p >= hi) continue;
        u64 acc = 0;
        for (u32 e = offsets[p]; e < offsets[p + 1]; e++) {
            u64 s = targets[e];
            u64 base = s / 64;
            if (w >= base) {
                acc |= rows[s * stride + (w - base)];
                if (w == base) acc |= 1ull << (s % 64);
            }
        }
        rows[p * stride + (w - p / 64)] = acc & band_mask(p, words, w);
    }
}

// The constraint test: side i is the pairs pairs[2k], pairs[2k+1] for k in
// side_ptr[i] .. side_ptr[i+1], each an edge (a, b) of the side; out[i] is
// the index within the side of the first edge whose target b reaches its
// source a, or 0xffffffff.
extern "C" __global__ void test_sides(const u64* rows, u32 words, const u32* side_ptr, const u32* pairs,
                                      u32 sides, u32* out) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= sides) return;
    u32 r = 0xffffffffu;
    u64 width = (u64)words * 64, stride = (u64)words + 1;
    for (u32 k = side_ptr[i]; k < side_ptr[i + 1]; k++) {
        u32 a = pairs[2 * k], b = pairs[2 * k + 1];
        if (a > b && (u64)(a - b) < width &&
            ((rows[(u64)b * stride + (a / 64 - b / 64)] >> (a % 64)) & 1)) {
            r = k - side_ptr[i];
            break;
        }
    }
    out[i] = r;
}

// Adds the edge s -> d (positions, s < d, d - s < 64*words): thread t
// updates slot k = t % (words + 1) of row u = lo + t / (words + 1) (lo ..=
// s): when u is s or reaches s, and the slot's absolute word w = u/64 + k is
// at or after d/64, it ORs in word w of row d and bit d, masked to u's band
// (bitreach::BitReach::insert). Bit s is never written (every bit written is
// at a column >= d > s) and row d is never written (d > s >= u), so threads
// of one launch do not interfere.
extern "C" __global__ void insert_edge(u64* rows, u32 words, u32 lo, u32 s, u32 d) {
    u64 stride = (u64)words + 1;
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)(s - lo + 1) * stride) return;
    u32 u = lo + (u32)(t / stride), k = (u32)(t % stride);
    u64* row = rows + (u64)u * stride;
    u64 w = (u64)(u / 64) + k, db = d / 64;
    if (w < db) return;
    if (u != s && !((row[s / 64 - u / 64] >> (s % 64)) & 1)) return;
    u64 x = rows[(u64)d * stride + (w - db)];
    if (w == db) x |= 1ull << (d % 64);
    row[k] |= x & band_mask(u, words, w);
}
