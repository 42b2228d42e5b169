// Cloudflare's Durable Object SQL API (ctx.storage.sql) over sql.js (SQLite
// compiled to WebAssembly), for the GOOS=js tests of web/dostore in Node:
// scripts/test-wasm.sh loads this file with node --require, and the tests
// get a fresh in-memory database from
//
//	globalThis.floeSQLStorage: Promise<(from?: SqlStorage) => SqlStorage>
//
// Given a SqlStorage, it returns one over a copy of that one's database
// instead, as an object that restarts finds its storage, and closes the
// old one (an exec on it throws): a reopen, for tracetest.TestReopen.
//
// SqlStorage.exec(query, ...bindings) returns a cursor with toArray() (rows
// as objects), one() (the only row, or throws), raw() (rows as arrays, with
// toArray()) and columnNames, and throws an Error naming SQLite's complaint
// on a bad statement, as Cloudflare's does.
//
// Where it differs from Cloudflare's:
//   - The statement runs to its end inside exec and its rows are kept;
//     Cloudflare's cursor steps through them as it is read.
//   - One statement a call: Cloudflare runs each of several separated by
//     ";", here a second is refused.
//   - No implicit transaction: Cloudflare commits the writes of one
//     JavaScript turn together (a crash loses all or none); here each
//     statement stands alone, in memory.
//   - No limits: Cloudflare refuses a string, BLOB or row over 2 MB, a
//     statement over 100 KB and more than 100 bindings (tests/worker's
//     sql-limits.mjs stands in for those).
//   - An integer past 2^53 comes back rounded; a BLOB comes back as an
//     ArrayBuffer, as Cloudflare's.
"use strict";

const initSqlJs = require("sql.js");

class Cursor {
  constructor(columnNames, rows) {
    this.columnNames = columnNames;
    this._rows = rows;
  }
  raw() {
    const rows = this._rows;
    return { toArray: () => rows.map((r) => r.slice()), [Symbol.iterator]: () => rows.map((r) => r.slice())[Symbol.iterator]() };
  }
  toArray() {
    return this._rows.map((r) => Object.fromEntries(this.columnNames.map((c, i) => [c, r[i]])));
  }
  one() {
    if (this._rows.length !== 1) {
      throw new Error(`Expected exactly one result from SQL query, but got ${this._rows.length === 0 ? "no results" : "more than one"}.`);
    }
    return this.toArray()[0];
  }
  [Symbol.iterator]() {
    return this.toArray()[Symbol.iterator]();
  }
}

function binding(v, i) {
  if (v === null || typeof v === "number" || typeof v === "string") return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError(`sql.exec: binding ${i + 1} is a ${typeof v}: want a number, string, ArrayBuffer or null`);
}

const databases = new WeakMap(); // SqlStorage → its sql.js Database

function storage(SQL, from) {
  let db;
  if (from === undefined) {
    db = new SQL.Database();
  } else {
    const old = databases.get(from);
    if (!old) throw new TypeError("floeSQLStorage: from is not a SqlStorage of this shim, or was reopened already");
    db = new SQL.Database(old.export());
    old.close();
    databases.delete(from);
  }
  const sql = {
    exec(query, ...bindings) {
      if (typeof query !== "string") throw new TypeError("sql.exec: the query is not a string");
      if (/^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(query)) {
        throw new Error("To execute a transaction, please use the state.storage.transaction() or state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements.");
      }
      const args = bindings.map(binding);
      // iterateStatements hands over the statements one by one, so that a
      // second one is seen rather than ignored.
      const it = db.iterateStatements(query);
      let stmt;
      try {
        const first = it.next();
        if (!first.done) stmt = first.value;
      } catch (e) {
        throw new Error(`${e.message}: SQLITE_ERROR`);
      }
      if (!stmt) throw new Error("sql.exec: no statement in the query");
      try {
        if (it.getRemainingSQL().trim() !== "") throw new Error("sql.exec: more than one statement (this shim runs one a call)");
        const rows = [];
        try {
          if (args.length) stmt.bind(args);
          while (stmt.step()) rows.push(stmt.get().map((v) => (v instanceof Uint8Array ? v.slice().buffer : v)));
        } catch (e) {
          throw new Error(`${e.message}: SQLITE_ERROR`);
        }
        return new Cursor(stmt.getColumnNames(), rows);
      } finally {
        stmt.free();
      }
    },
  };
  databases.set(sql, db);
  return sql;
}

globalThis.floeSQLStorage = initSqlJs().then((SQL) => (from) => storage(SQL, from));
