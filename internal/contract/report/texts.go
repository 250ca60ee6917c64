package report

import (
	"reflect"

	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

// Texts rewrites every free text of the report in place with fn: the failure's message, versions,
// command lines, cipher names, whatever field a later change adds. It walks the report by
// reflection so that no new string field escapes what Bound and the runner's redaction promise. A
// field tagged `texts:"-"` is data, not text (the latency histogram) and is left alone.
func (r *Report) Texts(fn func(field, s string) string) {
	walkTexts(reflect.ValueOf(r).Elem(), "", fn)
}

func walkTexts(v reflect.Value, path string, fn func(field, s string) string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkTexts(v.Elem(), path, fn)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("texts") == "-" {
				continue
			}
			walkTexts(v.Field(i), path+"."+f.Name, fn)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkTexts(v.Index(i), path, fn)
		}
	case reflect.Map:
		// No map holds text today; a future one would be rewritten by keys kept, values replaced.
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			walkTexts(e, path, fn)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(fn(path, v.String()))
		}
	}
}

// Bound cuts every text of the report to what status holds (internal/contract/bounded): the failure's
// message to a condition's bound, a probe's text (which its transport reads, never stores) to
// MaxProbeText, every other text to a field's. Decode bounds what it reads, so
// the operator never stores more whatever the runner (or an image posing as it) wrote.
func (r *Report) Bound() {
	r.Texts(func(field, s string) string {
		switch field {
		case ".Failure.Message":
			return bounded.Text(s, bounded.ReportMessage)
		case ".Probes.Before", ".Probes.After":
			return bounded.Text(s, MaxProbeText)
		}
		return bounded.Text(s, bounded.Field)
	})
}
