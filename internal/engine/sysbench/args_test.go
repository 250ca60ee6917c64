package sysbench

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

func TestLoadArgs(t *testing.T) {
	const opts = "--config-file=/o"
	tests := []struct {
		name string
		load runspec.Load
		want string
	}{
		{"defaults left to sysbench", runspec.Load{Builtin: "oltp_point_select", Duration: 1500 * time.Millisecond},
			"oltp_point_select " + opts + " --threads=1 --time=2 run"},
		{"clients are threads, progress every second", runspec.Load{Builtin: "oltp_read_only", Clients: 8, Threads: 2,
			Duration: time.Minute, ProgressInterval: time.Second, Protocol: "simple"},
			"oltp_read_only " + opts + " --db-ps-mode=disable --threads=8 --time=60 --report-interval=1 run"},
		{"transactions per client become the run's events", runspec.Load{Builtin: "oltp_read_write", Clients: 4,
			Transactions: 100, Protocol: "prepared"},
			"oltp_read_write " + opts + " --db-ps-mode=auto --threads=4 --events=400 --time=0 run"},
		{"an open loop, the rate rounded to whole transactions", runspec.Load{Script: true, Clients: 2, Duration: 10 * time.Second,
			Rate: 99.6}, ScriptPath + " " + opts + " --threads=2 --time=10 --rate=100 run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(LoadArgs(tt.load, "/o"), " "); got != tt.want {
				t.Errorf("LoadArgs =\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
}

// TestAtPortComesAfterTheOptions: sysbench takes the last value of an option, so a tunnel's port
// must follow the options file's.
func TestAtPortComesAfterTheOptions(t *testing.T) {
	g := Generator{OptionsFile: "/o"}
	args := g.LoadArgs(runspec.Load{Builtin: "oltp_point_select", Duration: time.Second})
	_, port := g.AtPort(5433)
	args = append(args, port...)
	if i, j := indexOf(args, "--config-file=/o"), indexOf(args, "--mysql-port=5433"); i < 0 || j < i {
		t.Errorf("the port does not follow the options: %q", args)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestOptions(t *testing.T) {
	conn := engine.Connection{Host: "db.example", HostAddr: "127.0.0.1", Port: 3306, Database: "app", User: "u",
		Password: `a b#c"d`, SSLMode: "verify-ca", SSLRootCert: "/ca", SSLCert: "/c", SSLKey: "/k"}
	got, err := Options(conn, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := "db-driver=mysql\nmysql-host=127.0.0.1\nmysql-port=3306\nmysql-user=u\n" +
		"mysql-password='a b#c\"d'\nmysql-db=app\ntables=1\ntable-size=200000\nmysql-ssl=on\n"
	if got != want {
		t.Errorf("Options =\n%s\nwant\n%s", got, want)
	}
	conn.Password = ""
	if got, err := Options(conn, 1); err != nil || !strings.Contains(got, "mysql-password=\"\"\n") {
		t.Errorf("an empty password: %q, %v", got, err)
	}
	for _, password := range []string{"a\nb", `a'b"c`} {
		conn.Password = password
		if _, err := Options(conn, 1); err == nil || strings.Contains(err.Error(), password) {
			t.Errorf("password %q: error %v (it must be refused without being shown)", password, err)
		}
	}
}

func TestStatements(t *testing.T) {
	tests := []struct {
		script string
		want   []string
	}{
		{"SELECT SLEEP(0.01);", []string{"SELECT SLEEP(0.01)"}},
		{"BEGIN;\nUPDATE t SET v = 'a;b' WHERE id = 1; -- a comment; with a semicolon\nCOMMIT;\n",
			[]string{"BEGIN", "UPDATE t SET v = 'a;b' WHERE id = 1", "COMMIT"}},
		{"SELECT 'it''s', \"x\\\"y;\", `c;d` /* ; */ FROM t", []string{"SELECT 'it''s', \"x\\\"y;\", `c;d`   FROM t"}},
	}
	for _, tt := range tests {
		got, err := Statements(tt.script)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Statements(%q) = %q, %v; want %q", tt.script, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-- only a comment\n", "\\set aid random(1, 10)\nSELECT 1;", "SELECT 'open;", "SELECT /* open"} {
		if got, err := Statements(bad); err == nil {
			t.Errorf("Statements(%q) = %q, want an error", bad, got)
		}
	}
}

func TestScriptQuotesForLua(t *testing.T) {
	lua, err := Script("SELECT \"a\\\\b\", '\t1';")
	if err != nil {
		t.Fatal(err)
	}
	if want := `  "SELECT \"a\\\\b\", '\0091'",`; !strings.Contains(lua, want) {
		t.Errorf("the statement is not quoted for Lua:\n%s\nwant a line %s", lua, want)
	}
}
