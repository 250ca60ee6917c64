package runspec

import (
	"flag"
	"fmt"
)

// Copy data kinds, as the API's spec.load.copy.data.
const (
	CopyText   = "text"
	CopyRandom = "random"
)

// CopyRowBytes is the size of a copy data set's rows.
const CopyRowBytes = 1024

// Copy is a copy load: the data set of Bytes of Data, created by the initialization (Run.Init)
// and copied once by each measured run.
type Copy struct {
	Bytes int64
	Data  string
}

// Set reports whether the run copies.
func (c Copy) Set() bool { return c.Bytes != 0 || c.Data != "" }

// Table is the data set's table: named by its kind and size, so that a data set made for one
// benchmark serves the next that asks for the same.
func (c Copy) Table() string { return fmt.Sprintf("tunnelbench_copy_%s_%d", c.Data, c.Bytes) }

// Rows is how many rows of CopyRowBytes make the data set.
func (c Copy) Rows() int64 { return max(c.Bytes/CopyRowBytes, 1) }

func (c Copy) addArgs(a *args) {
	if c.Bytes != 0 {
		*a = append(*a, fmt.Sprintf("--copy-bytes=%d", c.Bytes))
	}
	a.addString("copy-data", c.Data)
}

func (c *Copy) bindFlags(fs *flag.FlagSet) {
	fs.Int64Var(&c.Bytes, "copy-bytes", 0, "copy load: size of the data set in bytes (with --init: create it)")
	fs.StringVar(&c.Data, "copy-data", "", "copy load: "+CopyText+" (compressible) or "+CopyRandom)
}

func (c Copy) problems() []string {
	if !c.Set() {
		return nil
	}
	var errs []string
	if c.Bytes < CopyRowBytes {
		errs = append(errs, fmt.Sprintf("--copy-bytes must be at least %d", CopyRowBytes))
	}
	if c.Data != CopyText && c.Data != CopyRandom {
		errs = append(errs, fmt.Sprintf("--copy-data must be %s or %s, not %q", CopyText, CopyRandom, c.Data))
	}
	return errs
}
