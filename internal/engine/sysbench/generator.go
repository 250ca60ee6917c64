package sysbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// OptionsFile is where the runner writes sysbench's connection options (--config-file): the
// password stays out of the command line, which reports and `ps` show.
const OptionsFile = runspec.TmpMountPath + "/tunnelbench/sysbench.conf"

// TLSDir is the folder sysbench runs in: sysbench 1.0.20 takes its TLS files from the working
// folder, under fixed names (TLSFiles), and has no option to name them.
const TLSDir = runspec.TmpMountPath + "/tunnelbench/sysbench-tls"

// TLSFiles are the names sysbench 1.0.20 gives mysql_ssl_set with --mysql-ssl=on: the client's key
// and certificate, and the CA it verifies the server's certificate against. Every one must exist:
// the client library fails the connection on a missing file, so a TLS connection from sysbench
// 1.0.20 always presents a client certificate.
var TLSFiles = struct{ Key, Cert, CA string }{"client-key.pem", "client-cert.pem", "cacert.pem"}

// Generator is sysbench as the runner drives it: the MySQL engine's load generator.
type Generator struct {
	// Path is the sysbench executable; empty means "sysbench" on the PATH.
	Path string
	// OptionsFile is where the options are written (WriteOptions); empty means OptionsFile.
	OptionsFile string
	// TLSDir is the folder sysbench runs in, with its TLS files (WriteOptions); empty means
	// TLSDir.
	TLSDir string
}

var _ engine.Generator = Generator{}

// Program is the executable.
func (g Generator) Program() string {
	if g.Path == "" {
		return "sysbench"
	}
	return g.Path
}

// WorkDir is the folder with the TLS files sysbench reads.
func (g Generator) WorkDir() string {
	if g.TLSDir == "" {
		return TLSDir
	}
	return g.TLSDir
}

func (g Generator) options() string {
	if g.OptionsFile == "" {
		return OptionsFile
	}
	return g.OptionsFile
}

// Name is "sysbench".
func (Generator) Name() string { return "sysbench" }

// Version is what `sysbench --version` prints ("sysbench 1.0.20").
func (g Generator) Version(ctx context.Context) string {
	return engine.ProgramVersion(ctx, g.Program())
}

// Script is the script's sysbench test (Script), at ScriptPath.
func (Generator) Script(text string) (path, content string, err error) {
	content, err = Script(text)
	return ScriptPath, content, err
}

// LoadArgs are LoadArgs with the generator's options file.
func (g Generator) LoadArgs(load runspec.Load) []string { return LoadArgs(load, g.options()) }

// AtPort overrides the options file's port: it comes after it on the command line.
func (Generator) AtPort(port int) (env, args []string) {
	return nil, []string{"--mysql-port=" + strconv.Itoa(port)}
}

// TransactionLogArgs is nil: sysbench logs no transaction.
func (Generator) TransactionLogArgs(string, float64) []string { return nil }

// InitArgs are the cleanup's and the prepare's arguments; the scale is the options file's
// (WriteOptions).
func (g Generator) InitArgs(int) [][]string { return InitArgs(g.options()) }

// StormScript is empty: sysbench opens no connection per transaction.
func (Generator) StormScript() string { return "" }

// StormArgs is nil: sysbench opens no connection per transaction.
func (Generator) StormArgs(int32) []string { return nil }

// Parse is Parse.
func (Generator) Parse(r io.Reader) (*engine.Result, error) { return Parse(r) }

// ParseProgress is ParseProgress.
func (Generator) ParseProgress(line string) (engine.ProgressPoint, bool) { return ParseProgress(line) }

// LastError is LastError.
func (Generator) LastError(output string) string { return LastError(output) }

// ConnectionLost is ConnectionLost.
func (Generator) ConnectionLost(message string) bool { return ConnectionLost(message) }

// Prepare writes the connection's options, and the data set's size at scale, to the generator's
// options file, readable by its owner only, and links the connection's TLS files into its working
// folder under the names sysbench reads.
func (g Generator) Prepare(conn engine.Connection, scale int) error {
	text, err := Options(conn, scale)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(g.WorkDir(), 0o700); err != nil {
		return fmt.Errorf("cannot make sysbench's folder: %w", err)
	}
	if conn.Encrypted() {
		for name, target := range map[string]string{TLSFiles.Key: conn.SSLKey, TLSFiles.Cert: conn.SSLCert, TLSFiles.CA: conn.SSLRootCert} {
			link := filepath.Join(g.WorkDir(), name)
			_ = os.Remove(link)
			if err := os.Symlink(target, link); err != nil {
				return fmt.Errorf("cannot link sysbench's %s: %w", name, err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(g.options()), 0o700); err != nil {
		return fmt.Errorf("cannot write sysbench's options: %w", err)
	}
	if err := os.WriteFile(g.options(), []byte(text), 0o600); err != nil {
		return fmt.Errorf("cannot write sysbench's options: %w", err)
	}
	return nil
}

// Options renders the connection as sysbench's options file ("name=value" lines).
func Options(conn engine.Connection, scale int) (string, error) {
	values := []struct{ name, value string }{
		{"db-driver", "mysql"},
		{"mysql-host", conn.Dial()},
		{"mysql-port", strconv.Itoa(conn.Port)},
		{"mysql-user", conn.User},
		{"mysql-password", conn.Password},
		{"mysql-db", conn.Database},
		{"tables", "1"},
		{"table-size", strconv.Itoa(TableSize(scale))},
	}
	if conn.Encrypted() {
		// Only when on: in the options file, sysbench 1.0.20 reads mysql-ssl=off as on.
		values = append(values, struct{ name, value string }{"mysql-ssl", "on"})
		if err := tlsFilesGiven(conn); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	for _, v := range values {
		if v.value == "" && v.name != "mysql-password" {
			continue
		}
		quoted, err := quote(v.value)
		if err != nil {
			return "", fmt.Errorf("sysbench's %s %w", v.name, err)
		}
		fmt.Fprintf(&b, "%s=%s\n", v.name, quoted)
	}
	return b.String(), nil
}

// quote puts a value that needs it between the quotes sysbench's options file strips: unquoted, a
// space ends the value and a leading # makes the line a comment; quoted, a boolean no longer reads
// as one ("off" is on), so a plain value stays plain (tried on sysbench 1.0.20). Its parser has no
// escape, so a value with both quote marks, or a line break, cannot be carried.
func quote(value string) (string, error) {
	switch {
	case value != "" && strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == "":
		return value, nil
	case strings.ContainsAny(value, "\r\n"):
		return "", errors.New("holds a line break, which its options file cannot carry")
	case !strings.Contains(value, `"`):
		return `"` + value + `"`, nil
	case !strings.Contains(value, "'"):
		return "'" + value + "'", nil
	}
	return "", errors.New("holds both a single and a double quote, which its options file cannot carry")
}

// tlsFilesGiven says which file sysbench 1.0.20's TLS lacks: it verifies the server against a CA
// and always presents a client certificate (TLSFiles), so it cannot connect without the three.
func tlsFilesGiven(conn engine.Connection) error {
	var missing []string
	for _, f := range []struct{ what, path string }{
		{"the server's CA", conn.SSLRootCert}, {"a client certificate", conn.SSLCert}, {"its key", conn.SSLKey},
	} {
		if f.path == "" {
			missing = append(missing, f.what)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("sysbench 1.0.20 connects over TLS only with the server's CA, a client certificate and its key "+
			"(it has no option to do without), and this connection has no %s", strings.Join(missing, ", no "))
	}
	return nil
}
