#include "sweep/sweepstore.h"

#include <chrono>
#include <cmath>
#include <concepts>
#include <filesystem>
#include <limits>
#include <sqlite3.h>
#include <thread>

namespace tilescope {

namespace {

// The columns of `runs`, in the order of the schema, of inserts and of reads.
constexpr const char* kColumns =
    "point, model, model_sha256, hw_name, hw_json, batch, objective_n, objective_m, seed, mode, "
    "valid, reason, energy_pj, delay_cycles, cost, dram_bytes, noc_hop_bytes, elapsed_s, "
    "iterations, tree_json, search_json, created_at, dims";

// The same columns as a SELECT on a database of schema `version` gives them: schema 1 had no
// `dims` (every model was imported without free-dimension bindings), so it reads as "".
std::string selectColumns(int version) {
    std::string c = kColumns;
    if (version < 2) c.replace(c.rfind("dims"), 4, "'' AS dims");
    return c;
}

constexpr const char* kSchema = R"(CREATE TABLE IF NOT EXISTS runs (
  point TEXT PRIMARY KEY NOT NULL,
  model TEXT NOT NULL,
  model_sha256 TEXT NOT NULL,
  hw_name TEXT NOT NULL,
  hw_json TEXT NOT NULL,
  batch INTEGER NOT NULL,
  objective_n REAL NOT NULL,
  objective_m REAL NOT NULL,
  seed INTEGER NOT NULL,
  mode TEXT NOT NULL,
  valid INTEGER NOT NULL,
  reason TEXT NOT NULL,
  energy_pj REAL,
  delay_cycles REAL,
  cost REAL,
  dram_bytes REAL,
  noc_hop_bytes REAL,
  elapsed_s REAL NOT NULL,
  iterations INTEGER NOT NULL,
  tree_json TEXT NOT NULL,
  search_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  dims TEXT NOT NULL DEFAULT ''))";

// Schema 1 -> 2: the free-dimension bindings of the point's model.
constexpr const char* kAddDims = "ALTER TABLE runs ADD COLUMN dims TEXT NOT NULL DEFAULT ''";

// A prepared statement, finalized on every path.
class Statement {
  public:
    Statement(sqlite3* db, const std::string& sql) {
        m_rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &m_stmt, nullptr);
    }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    bool ok() const { return m_rc == SQLITE_OK; }
    sqlite3_stmt* get() const { return m_stmt; }

    void text(int i, const std::string& s) {
        sqlite3_bind_text(m_stmt, i, s.c_str(), int(s.size()), SQLITE_TRANSIENT);
    }
    void real(int i, double d) {
        if (std::isfinite(d))
            sqlite3_bind_double(m_stmt, i, d);
        else
            sqlite3_bind_null(m_stmt, i);
    }
    void integer(int i, long long v) { sqlite3_bind_int64(m_stmt, i, v); }

    std::string columnText(int i) const {
        const unsigned char* t = sqlite3_column_text(m_stmt, i);
        return t ? std::string(reinterpret_cast<const char*>(t),
                               size_t(sqlite3_column_bytes(m_stmt, i)))
                 : std::string();
    }
    double columnReal(int i) const {
        return sqlite3_column_type(m_stmt, i) == SQLITE_NULL
                   ? std::numeric_limits<double>::quiet_NaN()
                   : sqlite3_column_double(m_stmt, i);
    }
    long long columnInt(int i) const { return sqlite3_column_int64(m_stmt, i); }

    // Binds parameters 1..N in order, each by its type (text, integer, real).
    template <class... Values> void bindAll(const Values&... values) {
        int i = 0;
        (bindOne(++i, values), ...);
    }
    // Reads columns 0..N-1 of the current row into the variables, in order.
    template <class... Values> void readAll(Values&... values) const {
        int i = 0;
        (readOne(i++, values), ...);
    }

  private:
    void bindOne(int i, const std::string& s) { text(i, s); }
    void bindOne(int i, double d) { real(i, d); }
    template <std::integral T> void bindOne(int i, T v) { integer(i, (long long)v); }
    void readOne(int i, std::string& s) const { s = columnText(i); }
    void readOne(int i, double& d) const { d = columnReal(i); }
    void readOne(int i, bool& b) const { b = columnInt(i) != 0; }
    template <std::integral T> void readOne(int i, T& v) const { v = T(columnInt(i)); }

    sqlite3_stmt* m_stmt = nullptr;
    int m_rc = SQLITE_ERROR;
};

// Calls fn with a row's fields in kColumns' order: what a point writes and what reading the
// runs back gives, so the two can never disagree about which column is which.
template <class Row, class Fn> void withColumns(Row& r, Fn&& fn) {
    fn(r.point, r.model, r.modelSha256, r.hwName, r.hwJson, r.batch, r.objectiveN, r.objectiveM,
       r.seed, r.mode, r.valid, r.reason, r.energyPj, r.delayCycles, r.cost, r.dramBytes,
       r.nocHopBytes, r.elapsedS, r.iterations, r.treeJson, r.searchJson, r.createdAt, r.dims);
}

} // namespace

Error SweepStore::sqlError(const std::string& what) const {
    return makeError(m_path, what, sqlite3_errmsg(m_db));
}

std::optional<Error> SweepStore::exec(const char* sql, const std::string& what) const {
    char* msg = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &msg) == SQLITE_OK) return std::nullopt;
    Error e = makeError(m_path, what, msg ? msg : sqlite3_errmsg(m_db));
    sqlite3_free(msg);
    return e;
}

Result<std::unique_ptr<SweepStore>> SweepStore::open(const std::string& path, bool create) {
    std::error_code ec;
    if (!create && !std::filesystem::exists(path, ec)) return makeError(path, "", "no such file");
    sqlite3* db = nullptr;
    const int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    std::unique_ptr<SweepStore> s(new SweepStore(db, path));
    if (rc != SQLITE_OK) {
        if (!db) return makeError(path, "", "cannot open (out of memory)");
        return s->sqlError("open");
    }
    // A second writer (another shard on this machine) waits for the lock instead of failing.
    sqlite3_busy_timeout(db, 60000);
    // WAL: readers (the GUI) never block the writer; a killed writer leaves whole transactions.
    // synchronous=NORMAL keeps every committed row through a killed process (not through a
    // power cut, which may lose the last few: rerunning redoes them).
    if (create) {
        // Switching to WAL needs the file to itself: another shard starting at the same
        // moment holds it briefly, and SQLite does not wait for that lock by itself.
        std::optional<Error> e;
        for (int attempt = 0; attempt < 600; ++attempt) {
            e = s->exec("PRAGMA journal_mode=WAL", "");
            if (!e || (sqlite3_errcode(db) & 0xff) != SQLITE_BUSY) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        if (e) {
            if (e->message.find("not a database") != std::string::npos)
                return makeError(path, "", "not an SQLite database");
            return *e;
        }
        if (auto e2 = s->exec("PRAGMA synchronous=NORMAL", "")) return *e2;
    }
    int v = 0;
    if (auto e = s->readVersion(v)) return *e;
    if (v > schemaVersion())
        return makeError(path, "",
                         "sweep database schema " + std::to_string(v) +
                             " is newer than this tilescope (" + std::to_string(schemaVersion()) +
                             ")");
    if (create) {
        if (auto e = s->createOrMigrate()) return *e;
        v = schemaVersion();
    }
    s->m_version = v;
    // An existing table must have every column (a foreign database named .sqlite, say).
    Statement probe(db, "SELECT " + selectColumns(v) + " FROM runs LIMIT 0");
    if (!probe.ok())
        return makeError(
            path, "", std::string("not a tilescope sweep database (") + sqlite3_errmsg(db) + ")");
    return s;
}

std::optional<Error> SweepStore::readVersion(int& v) const {
    // Finalized before anything writes: a statement left open holds a read snapshot, and a
    // write from a stale snapshot fails at once instead of waiting.
    Statement version(m_db, "PRAGMA user_version");
    if (!version.ok()) {
        const std::string m = sqlite3_errmsg(m_db);
        return makeError(m_path, "",
                         m.find("not a database") != std::string::npos ? "not an SQLite database"
                                                                       : m);
    }
    v = 0;
    if (sqlite3_step(version.get()) == SQLITE_ROW) v = int(version.columnInt(0));
    return std::nullopt;
}

std::optional<Error> SweepStore::createOrMigrate() {
    // In a write transaction from the start: a read that turns into a write fails at once
    // (SQLITE_BUSY_SNAPSHOT) when another shard wrote in between; BEGIN IMMEDIATE waits.
    // The version is read again inside it: another shard may have just created or migrated.
    const std::string what = "create table runs";
    if (auto e = exec("BEGIN IMMEDIATE", what)) return e;
    int v = 0;
    std::optional<Error> e = readVersion(v);
    if (!e && v == 0) e = exec(kSchema, what);
    if (!e && v == 1) e = exec(kAddDims, "add the dims column (schema 1 to 2)");
    if (!e && v < schemaVersion())
        e = exec(("PRAGMA user_version=" + std::to_string(schemaVersion())).c_str(), what);
    if (!e) e = exec("COMMIT", what);
    if (e) exec("ROLLBACK", "");
    return e;
}

SweepStore::~SweepStore() {
    sqlite3_close(m_db);
}

Result<std::set<std::string>> SweepStore::points() const {
    Statement st(m_db, "SELECT point FROM runs");
    if (!st.ok()) return sqlError("read points");
    std::set<std::string> out;
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW)
        out.insert(st.columnText(0));
    if (rc != SQLITE_DONE) return sqlError("read points");
    return out;
}

Result<bool> SweepStore::insert(const SweepRow& r) {
    // BEGIN IMMEDIATE takes the write lock up front, so the busy timeout covers the wait.
    if (auto e = exec("BEGIN IMMEDIATE", "point " + r.point)) return *e;
    Statement st(m_db, std::string("INSERT OR IGNORE INTO runs (") + kColumns +
                           ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st.ok()) {
        Error e = sqlError("point " + r.point);
        exec("ROLLBACK", "");
        return e;
    }
    SweepRow row = r;
    if (!std::isfinite(row.elapsedS)) row.elapsedS = 0; // a row always has a wall time
    withColumns(row, [&st](const auto&... field) { st.bindAll(field...); });
    if (sqlite3_step(st.get()) != SQLITE_DONE) {
        Error e = sqlError("point " + r.point);
        exec("ROLLBACK", "");
        return e;
    }
    const bool added = sqlite3_changes(m_db) > 0;
    if (auto e = exec("COMMIT", "point " + r.point)) {
        exec("ROLLBACK", "");
        return *e;
    }
    return added;
}

Result<std::vector<SweepRow>> SweepStore::rows() const {
    Statement st(m_db, "SELECT " + selectColumns(m_version) + " FROM runs ORDER BY point");
    if (!st.ok()) return sqlError("read runs");
    std::vector<SweepRow> out;
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
        SweepRow r;
        withColumns(r, [&st](auto&... field) { st.readAll(field...); });
        out.push_back(std::move(r));
    }
    if (rc != SQLITE_DONE) return sqlError("read runs");
    return out;
}

Result<SweepStore::MergeCount> SweepStore::mergeFrom(const std::string& otherPath) {
    // Open it on its own first: the same checks (a sweep database, a known schema) and
    // errors that name that file.
    auto other = open(otherPath, false);
    if (!other) return other.error();
    const int otherVersion = (*other)->m_version;
    other->reset();
    std::error_code ec;
    if (std::filesystem::equivalent(otherPath, m_path, ec))
        return makeError(otherPath, "", "is the output database itself");
    {
        Statement attach(m_db, "ATTACH DATABASE ? AS src");
        attach.text(1, otherPath);
        if (!attach.ok() || sqlite3_step(attach.get()) != SQLITE_DONE)
            return sqlError("attach " + otherPath);
    }
    MergeCount c;
    auto fail = [&](const std::string& what) {
        Error e = sqlError(what);
        exec("ROLLBACK", "");
        exec("DETACH DATABASE src", "");
        return e;
    };
    if (auto e = exec("BEGIN IMMEDIATE", "merge " + otherPath)) {
        exec("DETACH DATABASE src", "");
        return *e;
    }
    {
        Statement dup(m_db, "SELECT count(*), coalesce(sum(NOT (s.cost IS m.cost)), 0) FROM "
                            "src.runs s JOIN main.runs m ON s.point = m.point");
        if (!dup.ok() || sqlite3_step(dup.get()) != SQLITE_ROW) return fail("merge " + otherPath);
        c.duplicates = dup.columnInt(0);
        c.conflicting = dup.columnInt(1);
    }
    {
        Statement ins(m_db, std::string("INSERT OR IGNORE INTO main.runs (") + kColumns +
                                ") SELECT " + selectColumns(otherVersion) + " FROM src.runs");
        if (!ins.ok() || sqlite3_step(ins.get()) != SQLITE_DONE) return fail("merge " + otherPath);
        c.added = sqlite3_changes(m_db);
    }
    if (auto e = exec("COMMIT", "merge " + otherPath)) {
        exec("ROLLBACK", "");
        exec("DETACH DATABASE src", "");
        return *e;
    }
    exec("DETACH DATABASE src", "");
    return c;
}

} // namespace tilescope
