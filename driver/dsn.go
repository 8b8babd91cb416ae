package driver

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-db/strata/sqlstore"
)

// Config is a parsed data source name:
//
//	/path/to/dir?db=mydb&sync=false
//
// The path is the store's folder (created when missing; relative paths are
// resolved against the working directory). Options:
//
//	db    the current database of every connection; created when missing.
//	      Default: none (qualify table names or run USE).
//	sync  true (default): a commit returns once it is durable; false: the
//	      write-ahead log is neither synced nor written at commit (a
//	      background writer hands it to the system within moments), so a
//	      crash of the process or the machine may lose the last commits
//	      (never tear one).
//	cache the block cache in bytes, with an optional KiB, MiB or GiB
//	      suffix (cache=512MiB). Default: sqlstore.DefaultCacheSize.
//	localInfile
//	      true: LOAD DATA LOCAL INFILE may read the process's files (it sets
//	      the global local_infile, as the mysql client's --local-infile
//	      and the server's variable together would). Default: false, and
//	      LOCAL fails with 3948 unless local_infile was set otherwise.
//
// A "file:" or "file://" prefix is accepted and ignored.
//
// A TiKV cluster is named by its PD servers instead of a folder:
//
//	tikv://pd1:2379,pd2:2379/?keyspace=app&db=mydb
//	tikv://mock?db=mydb                    (client-go's in-process mock)
//
// with the options of package sqlstore/tikvstore (keyspace, regions) and
// db; sync and cache are the embedded engine's and are refused. The TiKV
// backend is linked only into programs that import sqlstore/tikvstore
// (`import _ "github.com/strata-db/strata/sqlstore/tikvstore"`); without
// it such a name is refused with an error that says so.
type Config struct {
	// Dir is the absolute, cleaned path of the store's folder; empty when
	// Store names a cluster.
	Dir string
	// Store is the tikv:// address of the cluster, without db; empty for
	// a folder.
	Store string
	// DB is the database every connection starts in; empty for none.
	DB string
	// NoSync is sync=false.
	NoSync bool
	// CacheSize is the block cache in bytes; 0 for the default.
	CacheSize int64
	// LocalInfile is localInfile=true.
	LocalInfile bool
}

// ParseDSN parses a data source name. Every unknown option and bad value is
// reported, one per line, in a single error.
func ParseDSN(dsn string) (*Config, error) {
	if sqlstore.IsRemote(dsn) {
		return parseTiKV(dsn)
	}
	path, query, _ := strings.Cut(dsn, "?")
	path = strings.TrimPrefix(strings.TrimPrefix(path, "file://"), "file:")
	if path == "" {
		return nil, fmt.Errorf("%w: %q: no folder", ErrBadDSN, dsn)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadDSN, dsn, err)
	}
	c := &Config{Dir: abs}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadDSN, dsn, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		v := vals[k][len(vals[k])-1]
		switch k {
		case "db":
			c.DB = v
		case "sync":
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("sync=%q: want true or false", v))
				continue
			}
			c.NoSync = !b
		case "localInfile":
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("localInfile=%q: want true or false", v))
				continue
			}
			c.LocalInfile = b
		case "cache":
			n, err := parseSize(v)
			if err != nil || n <= 0 {
				errs = append(errs, fmt.Errorf("cache=%q: want a positive size such as 268435456 or 256MiB", v))
				continue
			}
			c.CacheSize = n
		default:
			errs = append(errs, fmt.Errorf("unknown option %q", k))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %q:\n%w", ErrBadDSN, dsn, errors.Join(errs...))
	}
	return c, nil
}

// parseTiKV parses the data source name of a remote backend (tikv://).
func parseTiKV(dsn string) (*Config, error) {
	addr, query, _ := strings.Cut(dsn, "?")
	vals, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadDSN, dsn, err)
	}
	c := &Config{}
	if db, ok := vals["db"]; ok {
		c.DB = db[len(db)-1]
		delete(vals, "db")
	}
	for _, k := range []string{"sync", "cache"} {
		if vals.Has(k) {
			return nil, fmt.Errorf("%w: %q: %s is an option of a folder, not of a TiKV cluster", ErrBadDSN, dsn, k)
		}
	}
	if len(vals) > 0 {
		addr += "?" + vals.Encode()
	}
	if err := sqlstore.CheckRemote(addr); err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadDSN, dsn, err)
	}
	c.Store = addr
	return c, nil
}

// location is what names the store: the folder or the cluster's address.
func (c *Config) location() string {
	if c.Store != "" {
		return c.Store
	}
	return c.Dir
}

// String formats the configuration as a data source name.
func (c *Config) String() string {
	if c.Store != "" {
		if c.DB == "" {
			return c.Store
		}
		sep := "?"
		if strings.Contains(c.Store, "?") {
			sep = "&"
		}
		return c.Store + sep + url.Values{"db": {c.DB}}.Encode()
	}
	v := url.Values{}
	if c.DB != "" {
		v.Set("db", c.DB)
	}
	if c.NoSync {
		v.Set("sync", "false")
	}
	if c.CacheSize != 0 {
		v.Set("cache", strconv.FormatInt(c.CacheSize, 10))
	}
	if c.LocalInfile {
		v.Set("localInfile", "true")
	}
	if len(v) == 0 {
		return c.Dir
	}
	return c.Dir + "?" + v.Encode()
}

// parseSize parses a byte count with an optional KiB, MiB or GiB suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}
