#include "util/fileio.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilescope {

Result<std::string> readFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return makeError(path, "", "is a directory, expected a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(path, "", std::string("cannot open: ") + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return makeError(path, "", "read error");
    return ss.str();
}

Result<MappedFile> MappedFile::open(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return makeError(path, "", "is a directory, expected a file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return makeError(path, "", std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return makeError(path, "", std::string("cannot read: ") + std::strerror(err));
    }
    const std::size_t size = std::size_t(st.st_size);
    void* data = nullptr;
    if (size > 0) {
        data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return makeError(path, "", std::string("cannot map: ") + std::strerror(err));
        }
        ::madvise(data, size, MADV_SEQUENTIAL);
    }
    ::close(fd); // the mapping keeps the file
    return MappedFile(data, size);
}

MappedFile::MappedFile(MappedFile&& o) noexcept : m_data(o.m_data), m_size(o.m_size) {
    o.m_data = nullptr;
    o.m_size = 0;
}

MappedFile::~MappedFile() {
    if (m_data) ::munmap(m_data, m_size);
}

std::optional<Error> writeFileAtomic(const std::string& path, const StreamWriter& write) {
    std::random_device rd;
    const std::string tmp =
        path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd() % 100000);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return makeError(path, "", std::string("cannot write: ") + std::strerror(errno));
        write(out);
        out.flush();
        if (!out) {
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            return makeError(path, "", "write failed (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        return makeError(path, "", "cannot replace file: " + ec.message());
    }
    return std::nullopt;
}

std::optional<Error> writeFileAtomic(const std::string& path, const std::string& contents) {
    return writeFileAtomic(path, [&contents](std::ostream& out) {
        out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    });
}

namespace {
std::string randomSuffix() {
    std::random_device rd;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", unsigned(rd()));
    return buf;
}

} // namespace

std::optional<Error> writeDirAtomic(const std::string& dir,
                                    const std::vector<std::pair<std::string, std::string>>& files) {
    std::vector<std::pair<std::string, StreamWriter>> writers;
    for (const auto& [name, contents] : files)
        writers.emplace_back(name, [&contents = contents](std::ostream& out) {
            out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        });
    return writeDirAtomic(dir, writers);
}

std::optional<Error>
writeDirAtomic(const std::string& dir,
               const std::vector<std::pair<std::string, StreamWriter>>& files) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::path(dir).lexically_normal();
    const std::filesystem::path parent =
        target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    const std::filesystem::path tmp =
        parent / (target.filename().string() + ".tmp-" + randomSuffix());
    std::filesystem::create_directories(tmp, ec);
    // Errors name the folder the user chose, not the temporary one beside it.
    if (ec) return makeError(dir, "", "cannot create it: " + ec.message());
    // The folder is private until the rename below, so its files are written in place.
    for (const auto& [name, write] : files) {
        std::string why;
        {
            std::vector<char> buffer(1 << 20); // outlives the stream that uses it
            std::ofstream out;
            out.rdbuf()->pubsetbuf(buffer.data(), std::streamsize(buffer.size()));
            out.open(tmp / name, std::ios::binary | std::ios::trunc);
            if (!out)
                why = std::strerror(errno);
            else {
                write(out);
                out.flush();
                if (!out) why = "write failed (disk full?)";
            }
        }
        if (!why.empty()) {
            std::filesystem::remove_all(tmp, ec);
            return makeError(dir, name, "cannot write: " + why);
        }
    }
    std::filesystem::path old;
    if (std::filesystem::exists(target)) {
        if (!std::filesystem::is_directory(target)) {
            std::filesystem::remove_all(tmp, ec);
            return makeError(dir, "", "exists and is not a folder");
        }
        old = parent / (target.filename().string() + ".old-" + randomSuffix());
        std::filesystem::rename(target, old, ec);
        if (ec) {
            std::filesystem::remove_all(tmp, ec);
            return makeError(dir, "", "cannot replace: " + ec.message());
        }
    }
    std::filesystem::rename(tmp, target, ec);
    if (ec) {
        const std::string why = ec.message();
        if (!old.empty()) std::filesystem::rename(old, target, ec);
        std::filesystem::remove_all(tmp, ec);
        return makeError(dir, "", "cannot write: " + why);
    }
    if (!old.empty()) std::filesystem::remove_all(old, ec);
    return std::nullopt;
}

namespace {
// FIPS 180-4 SHA-256, compact. Used for the model hash stored in sessions and results.
constexpr std::array<uint32_t, 64> K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
inline uint32_t rotr(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}
} // namespace

std::string sha256Hex(const std::string& data) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string msg = data;
    const uint64_t bitLen = static_cast<uint64_t>(data.size()) * 8;
    msg.push_back(static_cast<char>(0x80));
    while (msg.size() % 64 != 56)
        msg.push_back('\0');
    for (int i = 7; i >= 0; --i)
        msg.push_back(static_cast<char>((bitLen >> (i * 8)) & 0xff));
    for (size_t off = 0; off < msg.size(); off += 64) {
        uint32_t w[64];
        for (int i = 0; i < 16; ++i) {
            const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
            w[i] = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
        }
        for (int i = 16; i < 64; ++i) {
            const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            const uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
            const uint32_t ch = (e & f) ^ (~e & g);
            const uint32_t t1 = hh + S1 + ch + K[i] + w[i];
            const uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
            const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
            const uint32_t t2 = S0 + maj;
            hh = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
        h[5] += f;
        h[6] += g;
        h[7] += hh;
    }
    char out[65];
    for (int i = 0; i < 8; ++i)
        std::snprintf(out + 8 * i, 9, "%08x", h[i]);
    return std::string(out, 64);
}

Result<std::string> sha256File(const std::string& path) {
    auto data = readFile(path);
    if (!data) return data.error();
    return sha256Hex(*data);
}

} // namespace tilescope
