// Package statusguard is the one place where a status the operator is about to write meets the
// schema the API server will judge it by: the CRDs' own structural schema, their list types and
// their CEL rules, read from the generated manifests the binary embeds (config/crd).
//
// A status the API server refuses (422) is not stored, so a benchmark whose every pass writes one
// never ends: a runner's report with an 80-character part name did that, and so did a probe's
// long error quoted into a 256-character field. Checking each new field where it is filled was
// tried and broke again with every new field; here every text of every status is bounded at its
// own field's maxLength (keeping its beginning and its end, with the cut marked, as bounded.Text
// does), every number that JSON cannot carry is named, and what the schema would still refuse is
// returned, field by field, before anything is sent. The callers decide what a refusal means for
// their object (a benchmark ends Failed with reason InvalidResult, naming the field).
package statusguard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/config/crd"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

// MaxStatusBytes bounds a status as JSON. The API server refuses a request over 3 MiB and etcd
// an object over 1.5 MiB; a status that grew past a quarter of that is nonsense, not results.
const MaxStatusBytes = 384 << 10

// Fit bounds every text of obj's status at its field's maxLength, in place, and returns what the
// API server would still refuse in the status: field errors from the CRD's schema, list types and
// CEL rules, non-finite numbers, and a status too large to store. obj is a TunnelBenchmark or a
// ScheduledTunnelBenchmark; an empty list means the status can be written.
func Fit(obj runtime.Object) field.ErrorList {
	root := field.NewPath("status")
	kind, err := schemaFor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(root, err)}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(root, err)}
	}
	status, ok := u["status"].(map[string]any)
	if !ok {
		return nil
	}
	statusSchema := kind.structural.Properties["status"]
	var errs field.ErrorList
	u["status"] = fitValue(root, status, &statusSchema, &errs)
	if err := writeStatusBack(u, obj); err != nil {
		return append(errs, field.InternalError(root, err))
	}
	if len(errs) > 0 {
		// A non-finite number cannot even be encoded: validating the rest tells nothing more.
		return errs
	}
	if size := jsonSize(u["status"]); size > MaxStatusBytes {
		return field.ErrorList{field.TooLong(root, "", MaxStatusBytes)}
	}
	return kind.validate(u)
}

// kindSchema is one CRD's storage version, ready to validate with.
type kindSchema struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator
}

var (
	loadOnce sync.Once
	loaded   map[reflect.Type]*kindSchema
	loadErr  error
)

func schemaFor(obj runtime.Object) (*kindSchema, error) {
	loadOnce.Do(func() {
		loaded = map[reflect.Type]*kindSchema{}
		for obj, raw := range map[runtime.Object][]byte{
			&benchv1.TunnelBenchmark{}:          crd.TunnelBenchmarks,
			&benchv1.ScheduledTunnelBenchmark{}: crd.ScheduledTunnelBenchmarks,
		} {
			k, err := load(raw)
			if err != nil {
				loadErr = fmt.Errorf("the embedded CRD of %T: %w", obj, err)
				return
			}
			loaded[reflect.TypeOf(obj)] = k
		}
	})
	if loadErr != nil {
		return nil, loadErr
	}
	k, ok := loaded[reflect.TypeOf(obj)]
	if !ok {
		return nil, fmt.Errorf("no schema for %T", obj)
	}
	return k, nil
}

func load(raw []byte) (*kindSchema, error) {
	def := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, def); err != nil {
		return nil, err
	}
	for _, v := range def.Spec.Versions {
		if !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensionsinternal.JSONSchemaProps{}
		err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil)
		if err != nil {
			return nil, err
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, err
		}
		validator, _, err := validation.NewSchemaValidator(internal)
		if err != nil {
			return nil, err
		}
		return &kindSchema{structural: structural, validator: validator,
			cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
	}
	return nil, fmt.Errorf("no storage version with a schema")
}

// validate runs what the API server runs on a status write, and keeps the errors in the status:
// the spec was admitted already and is not what this write changes.
func (k *kindSchema) validate(u map[string]any) field.ErrorList {
	errs := validation.ValidateCustomResource(nil, u, k.validator)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, k.structural, u)...)
	if k.cel != nil {
		celErrs, _ := k.cel.Validate(context.Background(), nil, k.structural, u, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	var inStatus field.ErrorList
	for _, e := range errs {
		if e.Field == "status" || strings.HasPrefix(e.Field, "status.") || strings.HasPrefix(e.Field, "status[") {
			inStatus = append(inStatus, e)
		}
	}
	return inStatus
}

// fitValue walks v along its schema: a text longer than its field's maxLength is cut there, a
// number JSON cannot carry is named (and zeroed, so that the object still converts).
func fitValue(path *field.Path, v any, s *structuralschema.Structural, errs *field.ErrorList) any {
	if s == nil {
		return v
	}
	switch value := v.(type) {
	case map[string]any:
		for key, child := range value {
			if p, ok := s.Properties[key]; ok {
				value[key] = fitValue(path.Child(key), child, &p, errs)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
				value[key] = fitValue(path.Key(key), child, s.AdditionalProperties.Structural, errs)
			}
		}
		return value
	case []any:
		for i, child := range value {
			value[i] = fitValue(path.Index(i), child, s.Items, errs)
		}
		return value
	case string:
		if s.ValueValidation != nil && s.ValueValidation.MaxLength != nil {
			if limit := int(*s.ValueValidation.MaxLength); utf8.RuneCountInString(value) > limit || !utf8.ValidString(value) {
				return bounded.Text(value, limit)
			}
		}
		return value
	case float64:
		if math.IsNaN(value) || math.IsInf(value, 0) {
			*errs = append(*errs, field.Invalid(path, fmt.Sprint(value), "not a finite number"))
			return float64(0)
		}
		return value
	}
	return v
}

// writeStatusBack stores the fitted status into obj's Status field.
func writeStatusBack(u map[string]any, obj runtime.Object) error {
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, fresh.Interface()); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().FieldByName("Status").Set(fresh.Elem().FieldByName("Status"))
	return nil
}

func jsonSize(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt
	}
	return len(raw)
}
