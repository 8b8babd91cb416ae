package driver

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
//	      write-ahead log is not synced at commit, so a machine crash may
//	      lose the last commits (never tear one).
//
// A "file:" or "file://" prefix is accepted and ignored.
type Config struct {
	// Dir is the absolute, cleaned path of the store's folder.
	Dir string
	// DB is the database every connection starts in; empty for none.
	DB string
	// NoSync is sync=false.
	NoSync bool
}

// ParseDSN parses a data source name. Every unknown option and bad value is
// reported, one per line, in a single error.
func ParseDSN(dsn string) (*Config, error) {
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
		default:
			errs = append(errs, fmt.Errorf("unknown option %q", k))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %q:\n%w", ErrBadDSN, dsn, errors.Join(errs...))
	}
	return c, nil
}

// String formats the configuration as a data source name.
func (c *Config) String() string {
	v := url.Values{}
	if c.DB != "" {
		v.Set("db", c.DB)
	}
	if c.NoSync {
		v.Set("sync", "false")
	}
	if len(v) == 0 {
		return c.Dir
	}
	return c.Dir + "?" + v.Encode()
}
