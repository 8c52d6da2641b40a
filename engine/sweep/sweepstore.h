// The SQLite database of a sweep (docs/sweep.md, "Database"): one `runs` row per point, WAL
// journal, each row written in its own transaction so a killed sweep leaves whole rows only.
#pragma once

#include "sweep/sweep.h"
#include "util/result.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

struct sqlite3;

namespace tilescope {

class SweepStore {
  public:
    // Opens a sweep database: read-write, creating the file and the table, when `create`;
    // read-only (the viewer, merge inputs) otherwise. A database of an older schema opened
    // read-write is migrated in place (schema 1 lacks `dims`); read-only, it reads as if
    // migrated. Errors name the file: not a database, a `runs` table without the expected
    // columns, a newer schema.
    static Result<std::unique_ptr<SweepStore>> open(const std::string& path, bool create = true);
    ~SweepStore();
    SweepStore(const SweepStore&) = delete;
    SweepStore& operator=(const SweepStore&) = delete;

    const std::string& path() const { return m_path; }
    // The point keys already stored: a rerun skips these.
    Result<std::set<std::string>> points() const;
    // Writes one row in its own transaction; false (not an error) when the point was
    // already there (the first result is kept). Another process writing the same file
    // waits up to a minute for its lock.
    Result<bool> insert(const SweepRow& row);
    // Every row, ordered by point key.
    Result<std::vector<SweepRow>> rows() const;

    struct MergeCount {
        long long added = 0;       // rows new to this database
        long long duplicates = 0;  // points already here
        long long conflicting = 0; // of the duplicates: a different cost (not reproducible)
    };
    // sweep-merge: copies the rows of another sweep database that this one lacks, in one
    // transaction.
    Result<MergeCount> mergeFrom(const std::string& otherPath);

    // 2: the `dims` column (the model's free-dimension bindings).
    static int schemaVersion() { return 2; }

  private:
    SweepStore(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    std::optional<Error> exec(const char* sql, const std::string& what) const;
    std::optional<Error> readVersion(int& v) const; // PRAGMA user_version
    std::optional<Error> createOrMigrate();         // to schemaVersion(), in one transaction
    Error sqlError(const std::string& what) const;

    sqlite3* m_db;
    std::string m_path;
    int m_version = 0; // the schema as opened (an older one only when read-only)
};

} // namespace tilescope
