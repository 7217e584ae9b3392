package toolsearch

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/sqlitefile"
)

// SQLiteCache keeps tools' vectors in a SQLite file, by model and SHA-256
// of the text embedded, so that a restart, or another index over the same
// tools, embeds nothing it has embedded before. Safe for concurrent use,
// by several indexes and processes.
type SQLiteCache struct {
	db   *sql.DB
	path string
}

// OpenCache opens (creating) the vector cache at path.
func OpenCache(path string) (*SQLiteCache, error) {
	// Private like the project's other databases: tool texts may name
	// internal systems.
	db, abs, err := sqlitefile.Open(path, nil)
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embedding cache %q: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS vectors (
		model TEXT NOT NULL,
		hash BLOB NOT NULL,
		vec BLOB NOT NULL,
		at_ms INTEGER NOT NULL,
		PRIMARY KEY (model, hash)
	) WITHOUT ROWID`); err != nil {
		db.Close()
		return nil, fmt.Errorf("toolsearch: embedding cache %q: %w", path, err)
	}
	return &SQLiteCache{db: db, path: abs}, nil
}

// Path is the cache file's absolute path.
func (c *SQLiteCache) Path() string { return c.path }

// Close closes the cache; indexes that use it go on without it.
func (c *SQLiteCache) Close() error { return c.db.Close() }

// load returns the cached vectors of model among hashes.
func (c *SQLiteCache) load(ctx context.Context, model string, hashes []textHash) (map[textHash][]float32, error) {
	out := map[textHash][]float32{}
	// SQLite's limit on a statement's parameters is 32,766.
	for chunk := range slices.Chunk(hashes, 1000) {
		args := make([]any, 0, len(chunk)+1)
		args = append(args, model)
		for _, h := range chunk {
			args = append(args, h[:])
		}
		rows, err := c.db.QueryContext(ctx, `SELECT hash, vec FROM vectors WHERE model = ? AND hash IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return out, err
		}
		for rows.Next() {
			var hb, vb []byte
			if err := rows.Scan(&hb, &vb); err != nil {
				rows.Close()
				return out, err
			}
			var h textHash
			if len(hb) != len(h) {
				continue
			}
			copy(h[:], hb)
			if vec := decodeVector(vb); vec != nil {
				out[h] = vec
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// save stores vectors of model.
func (c *SQLiteCache) save(ctx context.Context, model string, vecs map[textHash][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO vectors (model, hash, vec, at_ms) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	now := time.Now().UnixMilli()
	for h, vec := range vecs {
		if _, err := stmt.ExecContext(ctx, model, h[:], encodeVector(vec), now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// encodeVector writes v as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reads a vector written by encodeVector and normalises it
// again (a vector written by another program may not be), or returns nil
// for a blob that is not one.
func decodeVector(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return normalize(v)
}
