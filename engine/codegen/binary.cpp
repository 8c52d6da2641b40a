// program.bin: the compact encoding of a Program (layout in docs/isa.md). Integers are
// LEB128 varints (signed ones zig-zag coded) so small ids and sizes take one or two bytes;
// a trailing FNV-1a checksum makes random corruption fail loudly instead of decoding into
// a different, plausible program.
#include "codegen/program.h"

#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>

namespace tilescope {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'C', 'P', 'R', 'O', 'G', '\0'};
constexpr std::uint16_t kVersion = 1;

std::uint32_t fnv1a(const char* data, size_t n) {
    std::uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; ++i) {
        h ^= std::uint8_t(data[i]);
        h *= 16777619u;
    }
    return h;
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
    // The FNV-1a checksum of everything written, then the checksum itself.
    void finish() {
        drain();
        raw32(m_hash);
        m_sink.write(out.data(), std::streamsize(out.size()));
        out.clear();
    }
    void u8(std::uint8_t v) { out.push_back(char(v)); }
    void uv(std::uint64_t v) {
        while (v >= 0x80) {
            out.push_back(char((v & 0x7f) | 0x80));
            v >>= 7;
        }
        out.push_back(char(v));
    }
    void sv(std::int64_t v) { uv((std::uint64_t(v) << 1) ^ std::uint64_t(v >> 63)); }
    void str(const std::string& s) {
        uv(s.size());
        out += s;
    }
    void raw32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i)
            out.push_back(char((v >> (8 * i)) & 0xff));
    }

  private:
    std::ostream& m_sink;
    std::uint32_t m_hash = 2166136261u;
};

// Bounds-checked reader: every read either succeeds inside the buffer or records the first
// error (offset + reason) and returns zeros from then on, so decoding never runs off the end.
class Reader {
  public:
    Reader(const std::string& b) : m_b(b) {}
    bool failed() const { return !m_error.empty(); }
    const std::string& error() const { return m_error; }
    size_t offset() const { return m_pos; }
    size_t remaining() const { return m_b.size() - m_pos; }
    void fail(const std::string& why) {
        if (m_error.empty()) m_error = "byte " + std::to_string(m_pos) + ": " + why;
    }
    std::uint8_t u8() {
        if (failed()) return 0;
        if (m_pos >= m_b.size()) return fail("truncated"), 0;
        return std::uint8_t(m_b[m_pos++]);
    }
    std::uint64_t uv() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            const std::uint8_t b = u8();
            if (failed()) return 0;
            if (shift == 63 && (b & 0x7e)) return fail("varint overflows 64 bits"), 0;
            v |= std::uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        return fail("varint longer than 10 bytes"), 0;
    }
    std::int64_t sv() {
        const std::uint64_t u = uv();
        return std::int64_t(u >> 1) ^ -std::int64_t(u & 1);
    }
    // A count of items each at least minBytes long: larger than what is left is garbage.
    std::uint64_t count(size_t minBytes, const char* what) {
        const std::uint64_t n = uv();
        if (!failed() && n > remaining() / std::max<size_t>(1, minBytes))
            fail(std::string(what) + " count " + std::to_string(n) + " exceeds the data left");
        return failed() ? 0 : n;
    }
    std::int32_t i32(std::int64_t lo, const char* what) {
        const std::int64_t v = sv();
        if (!failed() && (v < lo || v > std::numeric_limits<std::int32_t>::max()))
            fail(std::string(what) + " out of range (" + std::to_string(v) + ")");
        return failed() ? 0 : std::int32_t(v);
    }
    std::uint32_t u32(const char* what) {
        const std::uint64_t v = uv();
        if (!failed() && v > std::numeric_limits<std::uint32_t>::max())
            fail(std::string(what) + " out of range (" + std::to_string(v) + ")");
        return failed() ? 0 : std::uint32_t(v);
    }
    std::string str(const char* what) {
        const std::uint64_t n = count(1, what);
        if (failed()) return {};
        std::string s = m_b.substr(m_pos, size_t(n));
        m_pos += size_t(n);
        return s;
    }
    std::uint32_t raw32() {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= std::uint32_t(u8()) << (8 * i);
        return v;
    }

  private:
    const std::string& m_b;
    size_t m_pos = 0;
    std::string m_error;
};

} // namespace

std::string encodeProgram(const Program& p) {
    std::ostringstream o;
    writeProgramBin(o, p);
    return o.str();
}

void writeProgramBin(std::ostream& sink, const Program& p) {
    Writer w(sink);
    w.out.append(kMagic, sizeof kMagic);
    w.u8(kVersion & 0xff);
    w.u8(kVersion >> 8);
    w.str(p.hardwareJson);
    w.str(p.schedule.dump());
    w.uv(p.layers.size());
    for (const auto& l : p.layers)
        w.str(l);
    w.uv(p.tiles.size());
    for (const auto& t : p.tiles) {
        w.sv(t.id);
        w.sv(t.x);
        w.sv(t.y);
        w.uv(t.instructions.size());
        for (const auto& i : t.instructions) {
            w.u8(std::uint8_t(i.op));
            w.uv(i.id);
            w.sv(i.layer);
            w.uv(i.bytes);
            w.sv(i.src);
            w.sv(i.dst);
            w.uv(i.mcast.size());
            for (auto m : i.mcast)
                w.sv(m);
            w.uv(i.stages);
            w.uv(i.cycles);
            for (auto v : i.lo)
                w.sv(v);
            for (auto v : i.hi)
                w.sv(v);
            w.uv(i.deps.size());
            for (const auto& d : i.deps) {
                w.uv(d.id);
                w.uv(d.stage);
            }
            w.uv(i.buffers.size());
            for (const auto& b : i.buffers) {
                w.sv(b.tile);
                w.uv(b.offset);
                w.uv(b.bytes);
                w.u8(b.write ? 1 : 0);
            }
            if (w.out.size() >= (1u << 16)) w.drain();
        }
    }
    w.finish();
}

Result<Program> decodeProgram(const std::string& bytes, const std::string& file) {
    if (bytes.size() < sizeof kMagic + 2 + 4 ||
        std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return makeError(file, "", "not a tilescope program.bin (bad magic or too short)");
    const size_t body = bytes.size() - 4;
    std::uint32_t stored = 0;
    for (int i = 0; i < 4; ++i)
        stored |= std::uint32_t(std::uint8_t(bytes[body + size_t(i)])) << (8 * i);
    if (stored != fnv1a(bytes.data(), body))
        return makeError(file, "", "checksum mismatch (truncated or corrupted program.bin)");

    const std::string payload = bytes.substr(0, body);
    Reader r(payload);
    for (size_t i = 0; i < sizeof kMagic; ++i)
        r.u8();
    const std::uint16_t version = std::uint16_t(r.u8() | (r.u8() << 8));
    if (version != kVersion)
        return makeError(file, "", "unsupported program.bin version " + std::to_string(version));
    Program p;
    p.hardwareJson = r.str("hardware JSON length");
    const std::string sched = r.str("schedule JSON length");
    if (!r.failed()) {
        p.schedule = nlohmann::json::parse(sched, nullptr, false);
        if (p.schedule.is_discarded()) r.fail("schedule block is not JSON");
    }
    const std::uint64_t nl = r.count(1, "layer");
    for (std::uint64_t k = 0; k < nl && !r.failed(); ++k)
        p.layers.push_back(r.str("layer name length"));
    const std::uint64_t nt = r.count(4, "tile");
    for (std::uint64_t k = 0; k < nt && !r.failed(); ++k) {
        TileProgram t;
        t.id = r.i32(0, "tile id");
        t.x = r.i32(0, "tile x");
        t.y = r.i32(0, "tile y");
        // Smallest instruction: op, id, layer, bytes, src, dst, mcast n, stages, cycles,
        // 8 range values, deps n, buffers n = 20 bytes.
        const std::uint64_t ni = r.count(20, "instruction");
        for (std::uint64_t q = 0; q < ni && !r.failed(); ++q) {
            Instruction i;
            const std::uint8_t op = r.u8();
            if (op > std::uint8_t(Op::Send)) r.fail("unknown opcode " + std::to_string(op));
            i.op = Op(op);
            i.tile = t.id;
            i.id = r.u32("instruction id");
            i.layer = r.i32(-1, "layer index");
            if (!r.failed() && i.layer >= std::int32_t(p.layers.size()))
                r.fail("layer index " + std::to_string(i.layer) + " beyond the layer table");
            i.bytes = r.uv();
            i.src = r.i32(kDram, "src");
            i.dst = r.i32(kDram, "dst");
            const std::uint64_t nm = r.count(1, "multicast");
            for (std::uint64_t m = 0; m < nm && !r.failed(); ++m)
                i.mcast.push_back(r.i32(0, "multicast tile"));
            i.stages = r.u32("stage count");
            i.cycles = r.uv();
            for (auto& v : i.lo)
                v = r.i32(std::numeric_limits<std::int32_t>::min(), "range");
            for (auto& v : i.hi)
                v = r.i32(std::numeric_limits<std::int32_t>::min(), "range");
            const std::uint64_t nd = r.count(2, "dependency");
            for (std::uint64_t d = 0; d < nd && !r.failed(); ++d) {
                Dep dep;
                dep.id = r.u32("dependency id");
                dep.stage = r.u32("dependency stage");
                i.deps.push_back(dep);
            }
            const std::uint64_t nb = r.count(4, "buffer");
            for (std::uint64_t b = 0; b < nb && !r.failed(); ++b) {
                BufferRef ref;
                ref.tile = r.i32(0, "buffer tile");
                ref.offset = r.uv();
                ref.bytes = r.uv();
                const std::uint8_t acc = r.u8();
                if (acc > 1) r.fail("bad buffer access flag " + std::to_string(acc));
                ref.write = acc == 1;
                i.buffers.push_back(ref);
            }
            t.instructions.push_back(std::move(i));
        }
        p.tiles.push_back(std::move(t));
    }
    if (!r.failed() && r.remaining() != 0)
        r.fail(std::to_string(r.remaining()) + " trailing bytes");
    if (r.failed()) return makeError(file, "", r.error());
    return p;
}

} // namespace tilescope
