// program.bin, version 2 (3 with DRAM descriptors, 4 with cores too): the compact encoding of a
// Program (layout in docs/isa.md). Every instruction is one fixed-width record of bit-packed
// fields; its variable tails (multicast tiles, dependencies, buffer regions) are rows of three side
// tables in the same order, located by the counts in the record. Each table's header gives, per
// field, a base and a bit width the encoder takes from the program's own minimum and maximum (value
// = base + the field's bits), so any Program round-trips exactly and a typical one takes a few bits
// per field. A trailing FNV-1a checksum makes random corruption fail loudly instead of decoding
// into a different, plausible program.
#include "codegen/instruction_program.h"
#include "eval/dram_layout.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>

namespace tilescope {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'C', 'P', 'R', 'O', 'G', '\0'};
// Version 3 adds a table of DRAM descriptors; version 4 both that table and one of the cores
// of compute-in-memory instructions. A program without either is written as version 2, one
// with descriptors only as version 3.
constexpr std::uint16_t kVersion = 2;
constexpr std::uint16_t kVersionDram = 3;
constexpr std::uint16_t kVersionCores = 4;

std::uint32_t fnv1a(const char* data, size_t n) {
    std::uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; ++i) {
        h ^= std::uint8_t(data[i]);
        h *= 16777619u;
    }
    return h;
}

// The tables and their fields, in record order (docs/isa.md "Binary encoding").
enum InsField {
    fOp,
    fId,
    fLayer,
    fBytes,
    fSrc,
    fDst,
    fStages,
    fCycles,
    fLo0,
    fExt0 = fLo0 + 4,
    fMcastN = fExt0 + 4,
    fDepN,
    fBufN,
    kInsFields
};
enum DepField { fDepDistance, fDepStage, kDepFields };
enum BufField { fBufTile, fBufOffset, fBufBytes, fBufWrite, kBufFields };
enum McastField { fMcastTile, kMcastFields };
// One row per instruction: its layout + 1 (0: no descriptor), base, runs, run and burst bytes.
enum DramField { fDramLayout, fDramBase, fDramRuns, fDramRunBytes, fDramBurst, kDramFields };
// One row per instruction: its core + 1 (0: the tile's own engines).
enum CoreField { fCore, kCoreFields };
// Signed fields compare as int64 when the encoder takes their minimum and maximum.
constexpr bool kInsSigned[kInsFields] = {false, false, true,  false, true, true, false,
                                         false, true,  true,  true,  true, true, true,
                                         true,  true,  false, false, false};
constexpr bool kDepSigned[kDepFields] = {true, false};
constexpr bool kBufSigned[kBufFields] = {true, false, false, false};
constexpr bool kMcastSigned[kMcastFields] = {true};
constexpr bool kDramSigned[kDramFields] = {false, false, false, false, false};
constexpr bool kCoreSigned[kCoreFields] = {false};

std::uint64_t lowMask(unsigned bits) {
    return bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
}

// Per field of a table: the smallest value (as the 64-bit pattern) and the bits that hold
// value - base. Built from the values the encoder will write.
template <int N> struct Columns {
    std::uint64_t base[N];
    unsigned bits[N];
    std::uint64_t lo[N], hi[N];
    bool any = false;
    const bool* isSigned;
    explicit Columns(const bool* s) : isSigned(s) {
        for (int f = 0; f < N; ++f)
            base[f] = bits[f] = lo[f] = hi[f] = 0;
    }
    void see(const std::uint64_t (&v)[N]) {
        for (int f = 0; f < N; ++f) {
            if (!any) {
                lo[f] = hi[f] = v[f];
                continue;
            }
            if (isSigned[f]) {
                if (std::int64_t(v[f]) < std::int64_t(lo[f])) lo[f] = v[f];
                if (std::int64_t(v[f]) > std::int64_t(hi[f])) hi[f] = v[f];
            } else {
                lo[f] = std::min(lo[f], v[f]);
                hi[f] = std::max(hi[f], v[f]);
            }
        }
        any = true;
    }
    void finish() {
        for (int f = 0; f < N; ++f) {
            base[f] = lo[f];
            bits[f] = unsigned(std::bit_width(hi[f] - lo[f]));
        }
    }
    size_t rowBits() const {
        size_t b = 0;
        for (int f = 0; f < N; ++f)
            b += bits[f];
        return std::max<size_t>(1, b);
    }
};

std::uint64_t sbits(std::int64_t v) {
    return std::uint64_t(v);
}

void instructionValues(const Instruction& i, std::uint64_t (&v)[kInsFields]) {
    v[fOp] = std::uint64_t(i.op);
    v[fId] = i.id;
    v[fLayer] = sbits(i.layer);
    v[fBytes] = i.bytes;
    v[fSrc] = sbits(i.src);
    v[fDst] = sbits(i.dst);
    v[fStages] = i.stages;
    v[fCycles] = i.cycles;
    for (int d = 0; d < 4; ++d) {
        v[fLo0 + d] = sbits(i.lo[size_t(d)]);
        v[fExt0 + d] = sbits(std::int64_t(i.hi[size_t(d)]) - i.lo[size_t(d)]);
    }
    v[fMcastN] = i.mcast.size();
    v[fDepN] = i.deps.size();
    v[fBufN] = i.buffers.size();
}
void coreValues(const Instruction& i, std::uint64_t (&v)[kCoreFields]) {
    v[fCore] = std::uint64_t(i.core + 1);
}

void dramValues(const Instruction& i, std::uint64_t (&v)[kDramFields]) {
    v[fDramLayout] = std::uint64_t(i.layout + 1);
    v[fDramBase] = i.base;
    v[fDramRuns] = i.runs;
    v[fDramRunBytes] = i.runBytes;
    v[fDramBurst] = i.burstBytes;
}
void depValues(const Instruction& i, const Dep& d, std::uint64_t (&v)[kDepFields]) {
    v[fDepDistance] = sbits(std::int64_t(i.id) - std::int64_t(d.id));
    v[fDepStage] = d.stage;
}
void bufValues(const BufferRef& b, std::uint64_t (&v)[kBufFields]) {
    v[fBufTile] = sbits(b.tile);
    v[fBufOffset] = b.offset;
    v[fBufBytes] = b.bytes;
    v[fBufWrite] = b.write ? 1 : 0;
}

// Encodes into `out`; drain() hands what is there to the sink (hashing it on the way), so
// a program of any size streams out through a small buffer.
class Writer {
  public:
    explicit Writer(std::ostream& sink) : m_sink(sink) {}
    std::string out;
    void drain() {
        for (char c : out) {
            m_hash ^= std::uint8_t(c);
            m_hash *= 16777619u;
        }
        m_sink.write(out.data(), std::streamsize(out.size()));
        out.clear();
    }
    void drainIfFull() {
        if (out.size() >= (1u << 16)) drain();
    }
    // The FNV-1a checksum of everything written, then the checksum itself.
    void finish() {
        drain();
        raw(m_hash, 4);
        m_sink.write(out.data(), std::streamsize(out.size()));
        out.clear();
    }
    void raw(std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            out.push_back(char((v >> (8 * i)) & 0xff));
    }
    void str(const std::string& s) {
        raw(s.size(), 4);
        out += s;
    }
    template <int N> void header(const Columns<N>& c, std::uint64_t rows) {
        raw(rows, 8);
        for (int f = 0; f < N; ++f) {
            out.push_back(char(c.bits[f]));
            raw(c.base[f], 8);
        }
    }
    // One row: every field's value - base in its bits, low bits first; rows follow each other
    // bit by bit (a row of no bits takes one), and a table ends on a byte boundary.
    template <int N> void row(const Columns<N>& c, const std::uint64_t (&v)[N]) {
        unsigned total = 0;
        for (int f = 0; f < N; ++f) {
            put(v[f] - c.base[f], c.bits[f]);
            total += c.bits[f];
        }
        if (total == 0) put(0, 1);
    }
    void endTable() {
        if (m_fill) out.push_back(char(m_acc));
        m_acc = 0;
        m_fill = 0;
    }

  private:
    void put(std::uint64_t v, unsigned n) {
        if (n > 32) {
            put(v & 0xffffffffu, 32);
            put(v >> 32, n - 32);
            return;
        }
        if (n == 0) return;
        m_acc |= (v & lowMask(n)) << m_fill;
        m_fill += n;
        while (m_fill >= 8) {
            out.push_back(char(m_acc & 0xff));
            m_acc >>= 8;
            m_fill -= 8;
        }
    }
    std::ostream& m_sink;
    std::uint32_t m_hash = 2166136261u;
    std::uint64_t m_acc = 0;
    unsigned m_fill = 0;
};

// Bounds-checked reader: every read either succeeds inside the buffer or records the first
// error (offset + reason) and returns zeros from then on, so decoding never runs off the end.
class Reader {
  public:
    Reader(const char* data, size_t size) : m_b(data), m_size(size) {}
    bool failed() const { return !m_error.empty(); }
    const std::string& error() const { return m_error; }
    size_t offset() const { return m_pos; }
    size_t remaining() const { return m_size - m_pos; }
    void fail(const std::string& why) { failAt(m_pos, why); }
    void failAt(size_t at, const std::string& why) {
        if (m_error.empty()) m_error = "byte " + std::to_string(at) + ": " + why;
    }
    std::uint64_t raw(int bytes) {
        if (failed()) return 0;
        if (remaining() < size_t(bytes)) return fail("truncated"), 0;
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v |= std::uint64_t(std::uint8_t(m_b[m_pos++])) << (8 * i);
        return v;
    }
    std::int32_t i32(std::int64_t lo, const char* what) {
        const size_t at = m_pos;
        const std::int64_t v = std::int32_t(std::uint32_t(raw(4)));
        if (!failed() && v < lo)
            failAt(at, std::string(what) + " out of range (" + std::to_string(v) + ")");
        return failed() ? 0 : std::int32_t(v);
    }
    // A count of items each at least minBytes long: larger than what is left is garbage.
    std::uint64_t count(int width, size_t minBytes, const char* what) {
        const size_t at = m_pos;
        const std::uint64_t n = raw(width);
        if (!failed() && n > remaining() / std::max<size_t>(1, minBytes))
            failAt(at,
                   std::string(what) + " count " + std::to_string(n) + " exceeds the data left");
        return failed() ? 0 : n;
    }
    std::string str(const char* what) {
        const std::uint64_t n = count(4, 1, what);
        if (failed()) return {};
        std::string s(m_b + m_pos, size_t(n));
        m_pos += size_t(n);
        return s;
    }
    void skip(size_t n) { m_pos += n; }
    const char* at() const { return m_b + m_pos; }

  private:
    const char* m_b;
    size_t m_size;
    size_t m_pos = 0;
    std::string m_error;
};

// A table as the decoder sees it: rows of rowBits bits each, back to back from `data`.
template <int N> struct Table {
    std::uint64_t base[N];
    unsigned bits[N];
    std::uint64_t rows = 0;
    size_t rowBits = 1;
    size_t start = 0; // byte offset of the first row in the file
    const char* data = nullptr;

    bool readHeader(Reader& r, const char* what) {
        rows = r.raw(8);
        size_t total = 0;
        for (int f = 0; f < N; ++f) {
            const size_t at = r.offset();
            bits[f] = unsigned(r.raw(1));
            base[f] = r.raw(8);
            if (!r.failed() && bits[f] > 64)
                r.failAt(at, std::string(what) + " field " + std::to_string(f) + " is " +
                                 std::to_string(bits[f]) + " bits wide (at most 64)");
            total += bits[f];
        }
        rowBits = std::max<size_t>(1, total);
        return !r.failed();
    }
    // Field values of row k, value = base + bits (64-bit wrap-around).
    void row(std::uint64_t k, std::uint64_t (&v)[N]) const {
        const std::uint64_t bit = k * rowBits;
        const auto* p = reinterpret_cast<const std::uint8_t*>(data + bit / 8);
        std::uint64_t acc = *p++ >> (bit % 8);
        unsigned fill = 8 - unsigned(bit % 8);
        auto get = [&](unsigned n) {
            while (fill < n) {
                acc |= std::uint64_t(*p++) << fill;
                fill += 8;
            }
            const std::uint64_t x = acc & lowMask(n);
            acc = n >= 64 ? 0 : acc >> n;
            fill -= n;
            return x;
        };
        for (int f = 0; f < N; ++f) {
            const unsigned n = bits[f];
            std::uint64_t x = 0;
            if (n > 32) {
                x = get(32);
                x |= get(n - 32) << 32;
            } else if (n) {
                x = get(n);
            }
            v[f] = base[f] + x;
        }
    }
    size_t offsetOf(std::uint64_t k) const { return start + size_t(k * rowBits / 8); }
    size_t bytes() const { return size_t((rows * rowBits + 7) / 8); }
};

bool fitsI32(std::uint64_t v, std::int64_t lo) {
    const std::int64_t s = std::int64_t(v);
    return s >= lo && s <= std::numeric_limits<std::int32_t>::max();
}

} // namespace

std::string encodeProgram(const Program& p) {
    std::ostringstream o;
    writeProgramBin(o, p);
    return o.str();
}

void writeProgramBin(std::ostream& sink, const Program& p) {
    // Pass 1: each field's range over the program.
    Columns<kInsFields> ins(kInsSigned);
    Columns<kDepFields> deps(kDepSigned);
    Columns<kBufFields> bufs(kBufSigned);
    Columns<kMcastFields> mcast(kMcastSigned);
    Columns<kDramFields> dram(kDramSigned);
    Columns<kCoreFields> cores(kCoreSigned);
    std::uint64_t nIns = 0, nDeps = 0, nBufs = 0, nMcast = 0;
    std::uint64_t iv[kInsFields], dv[kDepFields], bv[kBufFields], mv[kMcastFields], rv[kDramFields];
    std::uint64_t cv[kCoreFields];
    bool withDram = false, withCores = false;
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions) {
            instructionValues(i, iv);
            ins.see(iv);
            dramValues(i, rv);
            dram.see(rv);
            withDram = withDram || i.layout >= 0;
            coreValues(i, cv);
            cores.see(cv);
            withCores = withCores || i.core >= 0;
            ++nIns;
            for (const auto& d : i.deps) {
                depValues(i, d, dv);
                deps.see(dv);
                ++nDeps;
            }
            for (const auto& b : i.buffers) {
                bufValues(b, bv);
                bufs.see(bv);
                ++nBufs;
            }
            for (auto m : i.mcast) {
                mv[fMcastTile] = sbits(m);
                mcast.see(mv);
                ++nMcast;
            }
        }
    ins.finish();
    deps.finish();
    bufs.finish();
    mcast.finish();
    dram.finish();
    cores.finish();
    withDram = withDram || withCores;

    // Pass 2: header, then the four tables.
    Writer w(sink);
    w.out.append(kMagic, sizeof kMagic);
    w.raw(withCores ? kVersionCores : withDram ? kVersionDram : kVersion, 2);
    w.str(p.hardwareJson);
    w.str(p.schedule.dump());
    w.raw(p.layers.size(), 4);
    for (const auto& l : p.layers)
        w.str(l);
    w.raw(p.tiles.size(), 4);
    for (const auto& t : p.tiles) {
        w.raw(std::uint32_t(t.id), 4);
        w.raw(std::uint32_t(t.x), 4);
        w.raw(std::uint32_t(t.y), 4);
        w.raw(t.instructions.size(), 4);
    }
    w.header(ins, nIns);
    w.header(mcast, nMcast);
    w.header(deps, nDeps);
    w.header(bufs, nBufs);
    if (withDram) w.header(dram, nIns);
    if (withCores) w.header(cores, nIns);
    w.drain();
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions) {
            instructionValues(i, iv);
            w.row(ins, iv);
            w.drainIfFull();
        }
    w.endTable();
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions)
            for (auto m : i.mcast) {
                mv[fMcastTile] = sbits(m);
                w.row(mcast, mv);
                w.drainIfFull();
            }
    w.endTable();
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions)
            for (const auto& d : i.deps) {
                depValues(i, d, dv);
                w.row(deps, dv);
                w.drainIfFull();
            }
    w.endTable();
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions)
            for (const auto& b : i.buffers) {
                bufValues(b, bv);
                w.row(bufs, bv);
                w.drainIfFull();
            }
    w.endTable();
    if (withDram) {
        for (const auto& t : p.tiles)
            for (const auto& i : t.instructions) {
                dramValues(i, rv);
                w.row(dram, rv);
                w.drainIfFull();
            }
        w.endTable();
    }
    if (withCores) {
        for (const auto& t : p.tiles)
            for (const auto& i : t.instructions) {
                coreValues(i, cv);
                w.row(cores, cv);
                w.drainIfFull();
            }
        w.endTable();
    }
    w.finish();
}

// Reads the instruction table's rows in order, each with its tails from the side tables,
// checking every field against what the Program can hold.
struct InstructionReader {
    const std::string& file;
    const Table<kInsFields>& ins;
    const Table<kMcastFields>& mcast;
    const Table<kDepFields>& deps;
    const Table<kBufFields>& bufs;
    const Table<kDramFields>* dram;  // versions 3 and 4
    const Table<kCoreFields>* cores; // version 4
    size_t layers = 0;
    std::uint64_t row = 0, nextMcast = 0, nextDep = 0, nextBuf = 0;

    Error bad(size_t at, const std::string& why) const {
        return makeError(file, "", "byte " + std::to_string(at) + ": " + why);
    }
    // Every row of the side tables belongs to some instruction.
    bool usedAll() const {
        return nextMcast == mcast.rows && nextDep == deps.rows && nextBuf == bufs.rows;
    }
    std::optional<Error> read(Instruction& i, std::int32_t tile) {
        std::uint64_t iv[kInsFields], dv[kDepFields], bv[kBufFields], mv[kMcastFields];
        const size_t at = ins.offsetOf(row);
        ins.row(row++, iv);
        if (iv[fOp] > std::uint64_t(Op::Program))
            return bad(at, "unknown opcode " + std::to_string(iv[fOp]));
        i.op = Op(iv[fOp]);
        i.tile = tile;
        if (dram) {
            std::uint64_t rv[kDramFields];
            const size_t dat = dram->offsetOf(row - 1);
            dram->row(row - 1, rv);
            if (rv[fDramLayout] > std::uint64_t(kLayoutCount + 1))
                return bad(dat, "unknown DRAM layout " + std::to_string(rv[fDramLayout]));
            i.layout = std::int32_t(rv[fDramLayout]) - 1;
            i.base = rv[fDramBase];
            i.runs = rv[fDramRuns];
            i.runBytes = rv[fDramRunBytes];
            i.burstBytes = rv[fDramBurst];
        }
        if (cores) {
            std::uint64_t cv[kCoreFields];
            const size_t cat = cores->offsetOf(row - 1);
            cores->row(row - 1, cv);
            if (cv[fCore] > 1024)
                return bad(cat, "core index out of range (" + std::to_string(cv[fCore] - 1) + ")");
            i.core = std::int32_t(cv[fCore]) - 1;
        }
        if (iv[fId] > std::numeric_limits<std::uint32_t>::max())
            return bad(at, "instruction id out of range (" + std::to_string(iv[fId]) + ")");
        i.id = std::uint32_t(iv[fId]);
        if (!fitsI32(iv[fLayer], -1) || std::int64_t(iv[fLayer]) >= std::int64_t(layers))
            return bad(at, "instruction " + std::to_string(i.id) + ": layer index " +
                               std::to_string(std::int64_t(iv[fLayer])) +
                               " beyond the layer table");
        i.layer = std::int32_t(iv[fLayer]);
        i.bytes = iv[fBytes];
        if (!fitsI32(iv[fSrc], kDram) || !fitsI32(iv[fDst], kDram))
            return bad(at, "instruction " + std::to_string(i.id) + ": src or dst out of range");
        i.src = std::int32_t(iv[fSrc]);
        i.dst = std::int32_t(iv[fDst]);
        if (iv[fStages] > std::numeric_limits<std::uint32_t>::max())
            return bad(at, "instruction " + std::to_string(i.id) + ": stage count out of range");
        i.stages = std::uint32_t(iv[fStages]);
        i.cycles = iv[fCycles];
        for (size_t d = 0; d < 4; ++d) {
            // lo is an int32, hi - lo lies within +-(2^32 - 1): checked before adding.
            const std::int64_t lo = std::int64_t(iv[fLo0 + d]);
            const std::int64_t ext = std::int64_t(iv[fExt0 + d]);
            constexpr std::int64_t kSpan = std::int64_t(0xffffffffu);
            if (!fitsI32(iv[fLo0 + d], std::numeric_limits<std::int32_t>::min()) || ext < -kSpan ||
                ext > kSpan ||
                !fitsI32(std::uint64_t(lo + ext), std::numeric_limits<std::int32_t>::min()))
                return bad(at, "instruction " + std::to_string(i.id) + ": range out of range");
            i.lo[d] = std::int32_t(lo);
            i.hi[d] = std::int32_t(lo + ext);
        }
        // Tails: the counts must stay within their tables.
        if (iv[fMcastN] > mcast.rows - nextMcast || iv[fDepN] > deps.rows - nextDep ||
            iv[fBufN] > bufs.rows - nextBuf)
            return bad(at, "instruction " + std::to_string(i.id) +
                               ": multicast, dependency or buffer count runs past its table");
        i.mcast.resize(size_t(iv[fMcastN]));
        for (auto& m : i.mcast) {
            const size_t mat = mcast.offsetOf(nextMcast);
            mcast.row(nextMcast++, mv);
            if (!fitsI32(mv[fMcastTile], 0)) return bad(mat, "multicast tile out of range");
            m = std::int32_t(mv[fMcastTile]);
        }
        i.deps.resize(size_t(iv[fDepN]));
        for (auto& d : i.deps) {
            const size_t dat = deps.offsetOf(nextDep);
            deps.row(nextDep++, dv);
            const std::int64_t dist = std::int64_t(dv[fDepDistance]);
            const std::int64_t id =
                dist < -std::int64_t(0xffffffffu) || dist > std::int64_t(0xffffffffu)
                    ? -1
                    : std::int64_t(i.id) - dist;
            if (id < 0 || id > std::int64_t(std::numeric_limits<std::uint32_t>::max()))
                return bad(dat, "dependency id out of range");
            if (dv[fDepStage] > std::numeric_limits<std::uint32_t>::max())
                return bad(dat, "dependency stage out of range");
            d.id = std::uint32_t(id);
            d.stage = std::uint32_t(dv[fDepStage]);
        }
        i.buffers.resize(size_t(iv[fBufN]));
        for (auto& b : i.buffers) {
            const size_t bat = bufs.offsetOf(nextBuf);
            bufs.row(nextBuf++, bv);
            if (!fitsI32(bv[fBufTile], 0)) return bad(bat, "buffer tile out of range");
            if (bv[fBufWrite] > 1)
                return bad(bat, "bad buffer access flag " + std::to_string(bv[fBufWrite]));
            b.tile = std::int32_t(bv[fBufTile]);
            b.offset = bv[fBufOffset];
            b.bytes = bv[fBufBytes];
            b.write = bv[fBufWrite] == 1;
        }
        return std::nullopt;
    }
};

Result<Program> decodeProgram(std::string_view bytes, const std::string& file) {
    if (bytes.size() < sizeof kMagic + 2 + 4 ||
        std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return makeError(file, "", "not a tilescope program.bin (bad magic or too short)");
    const size_t body = bytes.size() - 4;
    std::uint32_t stored = 0;
    for (int i = 0; i < 4; ++i)
        stored |= std::uint32_t(std::uint8_t(bytes[body + size_t(i)])) << (8 * i);
    const std::uint16_t version =
        std::uint16_t(std::uint8_t(bytes[8]) | (std::uint8_t(bytes[9]) << 8));
    if (version == 1)
        return makeError(file, "",
                         "byte 8: program.bin version 1 (the varint encoding) is no longer read; "
                         "export the program again to get version 2");
    if (version != kVersion && version != kVersionDram && version != kVersionCores)
        return makeError(file, "",
                         "byte 8: unsupported program.bin version " + std::to_string(version));
    if (stored != fnv1a(bytes.data(), body))
        return makeError(file, "", "checksum mismatch (truncated or corrupted program.bin)");

    Reader r(bytes.data(), body);
    r.skip(sizeof kMagic + 2);
    Program p;
    p.hardwareJson = r.str("hardware JSON length");
    {
        const size_t at = r.offset();
        const std::string sched = r.str("schedule JSON length");
        if (!r.failed()) {
            p.schedule = nlohmann::json::parse(sched, nullptr, false);
            if (p.schedule.is_discarded()) r.failAt(at, "schedule block is not JSON");
        }
    }
    const std::uint64_t nl = r.count(4, 4, "layer");
    for (std::uint64_t k = 0; k < nl && !r.failed(); ++k)
        p.layers.push_back(r.str("layer name length"));
    const std::uint64_t nt = r.count(4, 16, "tile");
    std::vector<std::uint64_t> perTile;
    std::uint64_t declared = 0;
    for (std::uint64_t k = 0; k < nt && !r.failed(); ++k) {
        TileProgram t;
        t.id = r.i32(0, "tile id");
        t.x = r.i32(0, "tile x");
        t.y = r.i32(0, "tile y");
        const size_t at = r.offset();
        const std::uint64_t n = r.raw(4);
        declared += n; // at most 2^32 tiles x 2^32: no overflow
        if (!r.failed() && declared > r.remaining() * 8)
            r.failAt(at, "tile " + std::to_string(t.id) + ": instruction count " +
                             std::to_string(n) + " exceeds the data left");
        perTile.push_back(n);
        p.tiles.push_back(std::move(t));
    }
    Table<kInsFields> ins;
    Table<kMcastFields> mcast;
    Table<kDepFields> deps;
    Table<kBufFields> bufs;
    ins.readHeader(r, "instruction table");
    mcast.readHeader(r, "multicast table");
    deps.readHeader(r, "dependency table");
    bufs.readHeader(r, "buffer table");
    Table<kDramFields> dram;
    Table<kCoreFields> cores;
    const bool withDram = version >= kVersionDram, withCores = version >= kVersionCores;
    if (withDram) dram.readHeader(r, "DRAM descriptor table");
    if (withCores) cores.readHeader(r, "core table");
    if (!r.failed() && withDram && dram.rows != declared)
        r.fail("DRAM descriptor table has " + std::to_string(dram.rows) +
               " rows, the tiles declare " + std::to_string(declared));
    if (!r.failed() && withCores && cores.rows != declared)
        r.fail("core table has " + std::to_string(cores.rows) + " rows, the tiles declare " +
               std::to_string(declared));
    if (!r.failed() && ins.rows != declared)
        r.fail("instruction table has " + std::to_string(ins.rows) + " rows, the tiles declare " +
               std::to_string(declared));
    // Lay the tables out (each must fit the bytes left), then check the rows.
    auto place = [&](auto& t, const char* what) {
        if (r.failed()) return;
        if (t.rows > r.remaining() * 8 / t.rowBits)
            return r.fail(std::string(what) + ": " + std::to_string(t.rows) + " rows of " +
                          std::to_string(t.rowBits) + " bits exceed the data left");
        t.start = r.offset();
        t.data = r.at();
        r.skip(t.bytes());
    };
    place(ins, "instruction table");
    place(mcast, "multicast table");
    place(deps, "dependency table");
    place(bufs, "buffer table");
    if (withDram) place(dram, "DRAM descriptor table");
    if (withCores) place(cores, "core table");
    if (!r.failed() && r.remaining() != 0)
        r.fail(std::to_string(r.remaining()) + " trailing bytes");
    if (r.failed()) return makeError(file, "", r.error());

    InstructionReader reader{file,
                             ins,
                             mcast,
                             deps,
                             bufs,
                             withDram ? &dram : nullptr,
                             withCores ? &cores : nullptr,
                             p.layers.size()};
    for (size_t t = 0; t < p.tiles.size(); ++t) {
        TileProgram& tp = p.tiles[t];
        tp.instructions.resize(size_t(perTile[t]));
        for (auto& i : tp.instructions)
            if (auto e = reader.read(i, tp.id)) return *e;
    }
    if (!reader.usedAll())
        return makeError(file, "",
                         "byte " + std::to_string(ins.start) +
                             ": the instructions' counts do not use every row of the side tables");
    return p;
}

} // namespace tilescope
