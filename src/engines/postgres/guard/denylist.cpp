#include "engines/postgres/guard/denylist.hpp"

#include <array>
#include <string>

namespace mcpdb::postgres::guard {
namespace {

using enum NameMatch;

constexpr std::string_view kFiles = "server file access";
constexpr std::string_view kLargeObjects = "large object access";
constexpr std::string_view kRemote = "outbound connection";
constexpr std::string_view kDelay = "sleeps or takes locks";
constexpr std::string_view kSettings = "changes settings";
constexpr std::string_view kControl = "server or backend control";
constexpr std::string_view kWrites = "writes despite a read-only query";
constexpr std::string_view kSqlText = "executes SQL given as text";
constexpr std::string_view kReplication = "replication or WAL control";
constexpr std::string_view kDump = "dumps whole tables or schemas";

// PostgreSQL 15 built-ins plus common extensions (adminpack, dblink, pgsql-http, pg_net, tablefunc,
// pg_prewarm, pageinspect, pg_walinspect, pg_stat_statements, RDS aws_s3/aws_lambda). The role's
// privileges are the real boundary; this list catches templates that should never have been
// written.
constexpr std::array kDenied = {
    // Server files: read, list, stat, write (adminpack) and log/config file contents.
    DeniedFunction{"pg_read_file", Exact, kFiles},
    DeniedFunction{"pg_read_binary_file", Exact, kFiles},
    DeniedFunction{"pg_stat_file", Exact, kFiles},
    DeniedFunction{"pg_ls_", Prefix, kFiles},    // pg_ls_dir and every pg_ls_*dir
    DeniedFunction{"pg_file_", Prefix, kFiles},  // adminpack: pg_file_write/rename/unlink/sync/read
    DeniedFunction{"pg_logdir_ls", Exact, kFiles},
    DeniedFunction{"pg_current_logfile", Exact, kFiles},
    DeniedFunction{"pg_hba_file_rules", Exact, kFiles},
    DeniedFunction{"pg_ident_file_mappings", Exact, kFiles},
    DeniedFunction{"pg_show_all_file_settings", Exact, kFiles},
    DeniedFunction{"get_raw_page", Exact, kFiles},  // pageinspect: raw pages, dead rows included
    DeniedFunction{"pg_get_wal_", Prefix, kFiles},  // pg_walinspect reads WAL of every table
    // Large objects: server-side import/export and reads/writes outside table privileges.
    DeniedFunction{"lo_import", Exact, kLargeObjects},
    DeniedFunction{"lo_export", Exact, kLargeObjects},
    DeniedFunction{"lo_get", Exact, kLargeObjects},
    DeniedFunction{"lo_put", Exact, kLargeObjects},
    DeniedFunction{"lo_from_bytea", Exact, kLargeObjects},
    DeniedFunction{"lo_create", Exact, kLargeObjects},
    DeniedFunction{"lo_creat", Exact, kLargeObjects},
    DeniedFunction{"lo_unlink", Exact, kLargeObjects},
    DeniedFunction{"lo_open", Exact, kLargeObjects},
    DeniedFunction{"lo_close", Exact, kLargeObjects},
    DeniedFunction{"lo_lseek", Exact, kLargeObjects},
    DeniedFunction{"lo_lseek64", Exact, kLargeObjects},
    DeniedFunction{"lo_tell", Exact, kLargeObjects},
    DeniedFunction{"lo_tell64", Exact, kLargeObjects},
    DeniedFunction{"lo_truncate", Exact, kLargeObjects},
    DeniedFunction{"lo_truncate64", Exact, kLargeObjects},
    DeniedFunction{"loread", Exact, kLargeObjects},
    DeniedFunction{"lowrite", Exact, kLargeObjects},
    // Outbound connections: dblink, HTTP clients, AWS integrations (SSRF, exfiltration).
    DeniedFunction{"dblink", Prefix, kRemote},
    DeniedFunction{"http", Exact, kRemote},
    DeniedFunction{"http_", Prefix, kRemote},  // pgsql-http and pg_net's net.http_*
    DeniedFunction{"query_export_to_s3", Exact, kRemote},
    DeniedFunction{"table_import_from_s3", Exact, kRemote},
    DeniedFunction{"invoke", Exact, kRemote},  // aws_lambda.invoke
    // Delays and locks that outlive the statement or hold a connection.
    DeniedFunction{"pg_sleep", Prefix, kDelay},  // pg_sleep, pg_sleep_for, pg_sleep_until
    DeniedFunction{"pg_advisory_", Prefix, kDelay},
    DeniedFunction{"pg_try_advisory_", Prefix, kDelay},
    // Settings.
    DeniedFunction{"set_config", Exact, kSettings},
    DeniedFunction{"setseed", Exact,
                   kSettings},  // the session's random() sequence, not transactional
    // Backend signalling and server control.
    DeniedFunction{"pg_terminate_backend", Exact, kControl},
    DeniedFunction{"pg_cancel_backend", Exact, kControl},
    DeniedFunction{"pg_signal_backend", Exact, kControl},
    DeniedFunction{"pg_reload_conf", Exact, kControl},
    DeniedFunction{"pg_rotate_logfile", Prefix, kControl},  // and pg_rotate_logfile_old
    DeniedFunction{"pg_promote", Exact, kControl},
    DeniedFunction{"pg_log_backend_memory_contexts", Exact, kControl},
    DeniedFunction{"pg_backup_start", Exact, kControl},
    DeniedFunction{"pg_backup_stop", Exact, kControl},
    DeniedFunction{"pg_start_backup", Exact, kControl},
    DeniedFunction{"pg_stop_backup", Exact, kControl},
    DeniedFunction{"pg_wal_replay_pause", Exact, kControl},
    DeniedFunction{"pg_wal_replay_resume", Exact, kControl},
    DeniedFunction{"pg_prewarm", Exact, kControl},
    DeniedFunction{"autoprewarm_", Prefix, kControl},
    // Side effects that a read-only transaction does not stop.
    DeniedFunction{"pg_notify", Exact, kWrites},
    DeniedFunction{"nextval", Exact, kWrites},
    DeniedFunction{"setval", Exact, kWrites},
    DeniedFunction{"txid_current", Exact, kWrites},  // assigns a transaction id
    DeniedFunction{"pg_current_xact_id", Exact, kWrites},
    DeniedFunction{"pg_stat_reset", Prefix, kWrites},  // every pg_stat_reset_* too
    DeniedFunction{"pg_stat_statements_reset", Exact, kWrites},
    DeniedFunction{"pg_import_system_collations", Exact, kWrites},
    DeniedFunction{"pg_nextoid", Exact, kWrites},
    DeniedFunction{"binary_upgrade_", Prefix, kWrites},
    // Functions that run SQL passed as a string, escaping this guardrail.
    DeniedFunction{"query_to_xml", Prefix, kSqlText},  // and _and_xmlschema
    DeniedFunction{"query_to_xmlschema", Exact, kSqlText},
    DeniedFunction{"cursor_to_xml", Prefix, kSqlText},  // and cursor_to_xmlschema
    DeniedFunction{"ts_stat", Exact, kSqlText},
    DeniedFunction{"ts_rewrite", Exact, kSqlText},  // the two-argument form runs a query
    DeniedFunction{"crosstab", Prefix, kSqlText},   // tablefunc
    DeniedFunction{"connectby", Exact, kSqlText},
    DeniedFunction{"database_to_xml", Prefix, kDump},
    DeniedFunction{"schema_to_xml", Prefix, kDump},
    DeniedFunction{"table_to_xml", Prefix, kDump},
    // WAL, replication slots and origins.
    DeniedFunction{"pg_switch_wal", Exact, kReplication},
    DeniedFunction{"pg_switch_xlog", Exact, kReplication},
    DeniedFunction{"pg_create_restore_point", Exact, kReplication},
    DeniedFunction{"pg_logical_emit_message", Exact, kReplication},
    DeniedFunction{"pg_logical_slot_", Prefix, kReplication},  // get_changes consumes the slot
    DeniedFunction{"pg_create_physical_replication_slot", Exact, kReplication},
    DeniedFunction{"pg_create_logical_replication_slot", Exact, kReplication},
    DeniedFunction{"pg_copy_physical_replication_slot", Exact, kReplication},
    DeniedFunction{"pg_copy_logical_replication_slot", Exact, kReplication},
    DeniedFunction{"pg_drop_replication_slot", Exact, kReplication},
    DeniedFunction{"pg_replication_slot_advance", Exact, kReplication},
    DeniedFunction{"pg_replication_origin_", Prefix, kReplication},
};

std::string foldAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::span<const DeniedFunction> deniedFunctions() {
  return kDenied;
}

const DeniedFunction* findDeniedFunction(std::string_view name) {
  const std::string folded = foldAscii(name);
  for (const DeniedFunction& entry : kDenied) {
    const bool hit = entry.match == Exact ? folded == entry.name : folded.starts_with(entry.name);
    if (hit) return &entry;
  }
  return nullptr;
}

}  // namespace mcpdb::postgres::guard
