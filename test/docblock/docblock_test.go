package docblock

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{name: "the marked block", doc: "text\n<!-- tested: install -->\n```sh\nhelm install x\n  --wait\n```\n",
			want: "helm install x\n  --wait\n"},
		{name: "a blank line between marker and block", doc: "<!-- tested: install -->\n\n```sh\nmake images\n```\n",
			want: "make images\n"},
		{name: "another block is not it", doc: "```sh\nrm -rf /\n```\n<!-- tested: other -->\n```sh\nls\n```\n",
			err: "no block marked"},
		{name: "text after the marker", doc: "<!-- tested: install -->\nsome text\n```sh\nls\n```\n",
			err: "not followed by a fenced block"},
		{name: "unclosed", doc: "<!-- tested: install -->\n```sh\nls\n", err: "not closed"},
		{name: "two marked", doc: "<!-- tested: install -->\n```sh\na\n```\n<!-- tested: install -->\n```sh\nb\n```\n",
			err: "2 blocks marked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find([]byte(tc.doc), "install", "doc.md")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
