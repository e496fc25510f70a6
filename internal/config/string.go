package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// String renders the config one "key: value" line per setting, in a stable
// order. Secrets show as [redacted] (empty when unset) and passwords inside
// URLs as xxxxx, so the result is safe to log or print.
func (c Config) String() string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.key + ": " + c.display(f))
	}
	return b.String()
}

// LogValue renders the config for slog as a group keyed like the file, with
// the same redaction as String.
func (c Config) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		attrs = append(attrs, slog.String(f.key, c.display(f)))
	}
	return slog.GroupValue(attrs...)
}

// GoString keeps %#v readable and redacted.
func (c Config) GoString() string {
	return "config.Config{" + strings.ReplaceAll(c.String(), "\n", ", ") + "}"
}

// Format makes every fmt verb (%v, %+v, %s, %q, %#v…) use the redacted form.
func (c Config) Format(s fmt.State, verb rune) {
	switch {
	case verb == 'v' && s.Flag('#'):
		fmt.Fprint(s, c.GoString())
	case verb == 'q':
		fmt.Fprint(s, strconv.Quote(c.String()))
	default:
		fmt.Fprint(s, c.String())
	}
}

// display is one field's value as String shows it.
func (c Config) display(f fieldInfo) string {
	v := reflect.ValueOf(c).Field(f.index)
	switch {
	case f.typ == secretType:
		return Secret(v.String()).String()
	case f.typ == durationType:
		return time.Duration(v.Int()).String()
	case f.typ.Kind() == reflect.String:
		return redactURL(v.String())
	default:
		return fmt.Sprint(v.Interface())
	}
}

// redactURL hides the password of a URL with credentials; other text is
// returned as it is.
func redactURL(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "[unparsable URL hidden]"
	}
	return u.Redacted()
}

// value is one field's value for encoders: secrets and URL passwords
// redacted, durations as text ("5m0s"), other values as they are.
func (c Config) value(f fieldInfo) any {
	v := reflect.ValueOf(c).Field(f.index)
	switch {
	case f.typ == secretType, f.typ == durationType, f.typ.Kind() == reflect.String:
		return c.display(f)
	default:
		return v.Interface()
	}
}

// MarshalJSON encodes the config as an object keyed like the config file,
// in field order, redacted like String.
func (c Config) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(c.value(f))
		if err != nil {
			return nil, fmt.Errorf("config: encode %s: %w", f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalYAML encodes the config like the config file, redacted like
// String.
func (c Config) MarshalYAML() (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range fields {
		var v yaml.Node
		if err := v.Encode(c.value(f)); err != nil {
			return nil, fmt.Errorf("config: encode %s: %w", f.key, err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.key}, &v)
	}
	return m, nil
}
