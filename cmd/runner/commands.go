package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one subcommand of tunnelbench-runner. Each registers itself from the file that
// implements it (register, in an init function), so that a transport's in-pod end adds its file and
// nothing else here.
type command struct {
	// name is what the pod's command line says: `tunnelbench-runner NAME [flags]`.
	name string
	// run does the work with the arguments after the name, and returns the process's exit code.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands are the registered subcommands, by name.
var commands = map[string]command{}

// register adds a subcommand; a name registered twice is a programming error.
func register(c command) {
	if _, taken := commands[c.name]; taken {
		panic("tunnelbench-runner: command " + c.name + " registered twice")
	}
	commands[c.name] = c
}

// commandNames are the registered names, sorted, for usage and errors.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// dispatch runs the subcommand args[0] names.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: tunnelbench-runner %s [flags]\n", strings.Join(commandNames(), "|"))
		return 2
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "unknown command %q: use one of %s\n", args[0], strings.Join(commandNames(), ", "))
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}
