package sysbench

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// ScriptPath is where the runner writes an inline script's sysbench test (Lua).
const ScriptPath = runspec.TmpMountPath + "/tunnelbench/script.lua"

// Script turns a load's inline SQL script into the sysbench test that runs it: each thread opens
// one connection, and each transaction sends the script's statements one after the other, as
// pgbench runs a script without meta commands. The statements are SQL, split at the semicolons
// outside quotes and comments; pgbench's meta commands (\set, \sleep) have no sysbench meaning
// and are refused.
func Script(sql string) (string, error) {
	statements, err := Statements(sql)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("-- Written by tunnelbench-runner from the load's inline script.\n")
	b.WriteString("local statements = {\n")
	for _, s := range statements {
		fmt.Fprintf(&b, "  %s,\n", luaQuote(s))
	}
	b.WriteString("}\n\n")
	// The options file sizes the built-in tests' table; declared here, they are known options
	// rather than warnings, and unused.
	b.WriteString(`sysbench.cmdline.options = {
  tables = {"The built-in tests' tables (unused)", 1},
  table_size = {"The built-in tests' table size (unused)", 10000},
}

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  for i = 1, #statements do
    con:query(statements[i])
  end
end

function thread_done()
  con:disconnect()
end
`)
	return b.String(), nil
}

// luaQuote is s as a Lua 5.1 string literal (LuaJIT's): the quote and the backslash escaped, the
// control bytes as three-digit decimal escapes (so that a digit after one stays a digit), every
// other byte as it is (UTF-8 passes through).
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Statements splits a SQL script at the semicolons outside quotes ('…', "…", `…`) and comments
// (-- to the end of the line, /* … */), dropping empty statements and comments.
func Statements(sql string) ([]string, error) {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	lineStart := true
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case lineStart && c == '\\':
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = len(sql) - i
			}
			return nil, fmt.Errorf("the script's line %q is a pgbench meta command, which sysbench cannot run", sql[i:i+end])
		case c == '\'' || c == '"' || c == '`':
			end := closing(sql, i)
			if end < 0 {
				return nil, errors.New("the script has a quote that never closes")
			}
			cur.WriteString(sql[i : end+1])
			i = end
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				i = len(sql)
				continue
			}
			i += end - 1
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return nil, errors.New("the script has a comment that never closes")
			}
			i += end + 3
			cur.WriteByte(' ')
		case c == ';':
			flush()
		default:
			cur.WriteByte(c)
		}
		lineStart = c == '\n' || (lineStart && (c == ' ' || c == '\t'))
	}
	flush()
	if len(out) == 0 {
		return nil, errors.New("the script has no statement")
	}
	return out, nil
}

// closing is the index of the quote that closes the one at sql[open], a doubled quote or a
// backslash escaping it (MySQL's two ways), or -1.
func closing(sql string, open int) int {
	q := sql[open]
	for i := open + 1; i < len(sql); i++ {
		switch sql[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			if i+1 < len(sql) && sql[i+1] == q {
				i++
				continue
			}
			return i
		}
	}
	return -1
}
