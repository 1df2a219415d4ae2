package config

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// The settings schema is data: one tree of nodes drives validation (with
// the reference's zod wording, so messages match what users already know),
// the list of unknown keys, and the JSON Schema printed by "srt schema".

type kind int

const (
	kObject kind = iota
	kArray
	kRecord // an object with free keys and uniform values
	kString
	kBool
	kInt
	kEnum
	kPathEntry // a non-empty string, or {"path": "...", "literal": true}
	kNever     // a key that cannot be given in a file
)

type node struct {
	kind kind
	doc  string

	fields []field // kObject
	strict bool    // kObject: unknown keys are errors, not warnings

	elem     *node // kArray, kRecord
	minItems int   // kArray
	length   int   // kArray: exact length when > 0

	minLen int                 // kString
	check  func(string) string // kString, kPathEntry, record keys: "" or what is wrong

	min, max         int64 // kInt
	hasMin, hasMax   bool
	defaultValue     any
	enum             []string // kEnum
	never            string   // kNever: why
	arrayCheck       func([]any) string
	schemaStrPattern string // kString: a JSON Schema "pattern" for editors
}

type field struct {
	name     string
	required bool
	n        *node
}

// issue is one problem, at a path of keys and indices.
type issue struct {
	path []string
	msg  string
}

func (i issue) String() string {
	p := strings.Join(i.path, ".")
	if p == "" {
		p = "(root)"
	}
	return p + ": " + i.msg
}

type report struct {
	issues  []issue
	unknown []string // dotted paths of keys that are ignored
}

func (r *report) add(path []string, format string, args ...any) {
	r.issues = append(r.issues, issue{path: append([]string(nil), path...), msg: fmt.Sprintf(format, args...)})
}

// typeName is zod's name for the type of a decoded JSON value.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case *object:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (n *node) expected() string {
	switch n.kind {
	case kObject, kRecord:
		return "object"
	case kArray:
		return "array"
	case kString, kEnum:
		return "string"
	case kBool:
		return "boolean"
	case kInt:
		return "number"
	}
	return "value"
}

func (n *node) validate(v any, path []string, r *report) {
	switch n.kind {
	case kNever:
		r.add(path, "%s", n.never)
		return
	case kPathEntry:
		n.validatePathEntry(v, path, r)
		return
	}
	if typeName(v) != n.expected() {
		r.add(path, "Expected %s, received %s", n.expected(), typeName(v))
		return
	}
	switch n.kind {
	case kObject:
		o := v.(*object)
		known := map[string]bool{}
		for _, f := range n.fields {
			known[f.name] = true
			fv, ok := o.vals[f.name]
			if !ok {
				if f.required {
					r.add(append(path, f.name), "Required")
				}
				continue
			}
			f.n.validate(fv, append(path, f.name), r)
		}
		var extra []string
		for _, k := range o.keys {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) == 0 {
			return
		}
		if n.strict {
			quoted := make([]string, len(extra))
			for i, k := range extra {
				quoted[i] = "'" + k + "'"
			}
			r.add(path, "Unrecognized key(s) in object: %s", strings.Join(quoted, ", "))
			return
		}
		for _, k := range extra {
			r.unknown = append(r.unknown, strings.Join(append(append([]string(nil), path...), k), "."))
		}
	case kRecord:
		o := v.(*object)
		for _, k := range o.keys {
			if n.check != nil {
				if msg := n.check(k); msg != "" {
					r.add(append(path, k), "%s", msg)
					continue
				}
			}
			n.elem.validate(o.vals[k], append(path, k), r)
		}
	case kArray:
		a := v.([]any)
		if n.length > 0 && len(a) != n.length {
			r.add(path, "Array must contain exactly %d element(s)", n.length)
			return
		}
		if len(a) < n.minItems {
			r.add(path, "Array must contain at least %d element(s)", n.minItems)
			return
		}
		before := len(r.issues)
		for i, e := range a {
			n.elem.validate(e, append(path, strconv.Itoa(i)), r)
		}
		if n.arrayCheck != nil && len(r.issues) == before {
			if msg := n.arrayCheck(a); msg != "" {
				r.add(path, "%s", msg)
			}
		}
	case kString:
		s := v.(string)
		if len(s) < n.minLen {
			r.add(path, "String must contain at least %d character(s)", n.minLen)
			return
		}
		if n.check != nil {
			if msg := n.check(s); msg != "" {
				r.add(path, "%s", msg)
			}
		}
	case kEnum:
		s := v.(string)
		for _, e := range n.enum {
			if s == e {
				return
			}
		}
		quoted := make([]string, len(n.enum))
		for i, e := range n.enum {
			quoted[i] = "'" + e + "'"
		}
		r.add(path, "Invalid enum value. Expected %s, received '%s'", strings.Join(quoted, " | "), s)
	case kInt:
		num := v.(json.Number)
		f, ok := new(big.Float).SetString(string(num))
		if !ok {
			r.add(path, "Expected number, received %s", string(num))
			return
		}
		if !f.IsInt() {
			r.add(path, "Expected integer, received float")
			return
		}
		i, acc := f.Int64()
		if n.hasMin && (i < n.min || acc == big.Above) {
			r.add(path, "Number must be greater than or equal to %d", n.min)
		} else if n.hasMax && (i > n.max || acc == big.Below) {
			r.add(path, "Number must be less than or equal to %d", n.max)
		}
	}
}

func (n *node) validatePathEntry(v any, path []string, r *report) {
	const shape = `Expected a path, or { "path": "<path>", "literal": true }`
	switch v := v.(type) {
	case string:
		if v == "" {
			r.add(path, "Path cannot be empty")
			return
		}
		if n.check != nil {
			if msg := n.check(v); msg != "" {
				r.add(path, "%s", msg)
			}
		}
	case *object:
		p, okPath := v.vals["path"].(string)
		lit, okLit := v.vals["literal"].(bool)
		if !okPath || !okLit || !lit {
			r.add(path, shape)
			return
		}
		var extra []string
		for _, k := range v.keys {
			if k != "path" && k != "literal" {
				extra = append(extra, "'"+k+"'")
			}
		}
		if len(extra) > 0 {
			r.add(path, "Unrecognized key(s) in object: %s", strings.Join(extra, ", "))
			return
		}
		if p == "" {
			r.add(append(path, "path"), "Path cannot be empty")
		} else if strings.IndexByte(p, 0) >= 0 {
			r.add(append(path, "path"), "path contains a NUL byte")
		}
	default:
		r.add(path, shape)
	}
}

// jsonSchema renders the node as JSON Schema (draft 2020-12).
func (n *node) jsonSchema() map[string]any {
	s := map[string]any{}
	if n.doc != "" {
		s["description"] = n.doc
	}
	if n.defaultValue != nil {
		s["default"] = n.defaultValue
	}
	switch n.kind {
	case kObject:
		s["type"] = "object"
		props := map[string]any{}
		var req []string
		for _, f := range n.fields {
			if f.n.kind == kNever {
				continue
			}
			props[f.name] = f.n.jsonSchema()
			if f.required {
				req = append(req, f.name)
			}
		}
		s["properties"] = props
		if len(req) > 0 {
			s["required"] = req
		}
		// Unknown keys are errors in strict objects and ignored with a
		// warning elsewhere; either way an editor should flag them.
		s["additionalProperties"] = false
	case kRecord:
		s["type"] = "object"
		s["additionalProperties"] = n.elem.jsonSchema()
	case kArray:
		s["type"] = "array"
		s["items"] = n.elem.jsonSchema()
		if n.minItems > 0 {
			s["minItems"] = n.minItems
		}
		if n.length > 0 {
			s["minItems"], s["maxItems"] = n.length, n.length
		}
	case kString:
		s["type"] = "string"
		if n.minLen > 0 {
			s["minLength"] = n.minLen
		}
		if n.schemaStrPattern != "" {
			s["pattern"] = n.schemaStrPattern
		}
	case kBool:
		s["type"] = "boolean"
	case kInt:
		s["type"] = "integer"
		if n.hasMin {
			s["minimum"] = n.min
		}
		if n.hasMax {
			s["maximum"] = n.max
		}
	case kEnum:
		s["type"] = "string"
		s["enum"] = n.enum
	case kPathEntry:
		s["oneOf"] = []any{
			map[string]any{"type": "string", "minLength": 1},
			map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"path": map[string]any{"type": "string", "minLength": 1}, "literal": map[string]any{"const": true}},
				"required":             []string{"path", "literal"},
				"additionalProperties": false,
			},
		}
	}
	return s
}
