// Package scripts holds the rules the API sets on a load's pgbench scripts, shared by the CRD's CEL
// rules (api/v1alpha1's markers repeat the pattern, and a test holds them equal) and by the runner,
// which checks a script again before pgbench reads it. It imports no CRD type, so the runner does
// not link them.
package scripts

import "regexp"

// ShellMetaCommandPattern matches every spelling in which pgbench 15's lexer reads a \shell or a
// \setshell meta-command: a backslash anywhere outside a string or comment starts a meta-command,
// the word after it is found past spaces, tabs, form feeds, vertical tabs, carriage returns and
// backslash-newline continuations, and the word is compared without regard to case ("\ShElL",
// "\ \<newline> shell" and "select 1 \shell" all run a shell; internal/runner's test asks the real
// pgbench). The pattern ignores quotes and comments and does not require the word to end there, so
// it refuses a few scripts pgbench would not run as a shell (a '\shell' literal): erring on the
// safe side. The CRD's CEL rule on spec.load.script is this same pattern (TestShellRuleIsThePattern).
const ShellMetaCommandPattern = `(?i)\\(?:[ \t\r\f\v]|\\\r?\n)*(?:set)?shell`

var shellMetaCommand = regexp.MustCompile(ShellMetaCommandPattern)

// ShellMetaCommand is the first spelling of pgbench's \shell or \setshell in an inline script, as
// written, "" when there is none: the CRD refuses such a script at apply, and the runner refuses it
// again should one get past the API.
func ShellMetaCommand(script string) string {
	return shellMetaCommand.FindString(script)
}
