package glance

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// maxJSONBody bounds every JSON request body; image metadata is small.
const maxJSONBody = 1 << 20

type keyValue struct {
	Key   string
	Value any
}

var errMalformed = errorf(http.StatusBadRequest, "Malformed JSON in request body.")

// readJSONBody reads a bounded JSON body. Like Glance it ignores the
// Content-Type of JSON requests and parses the body regardless.
func readJSONBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Could not read the request body.")
	}
	if len(body) > maxJSONBody {
		return nil, errorf(http.StatusRequestEntityTooLarge, "Request body is larger than %d bytes.", maxJSONBody)
	}
	return body, nil
}

// decodeObject parses a JSON object keeping its key order, which Glance
// keeps for custom properties. Numbers stay json.Number so integers of any
// size are checked, not rounded.
func decodeObject(body []byte) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errMalformed
	}
	var out []keyValue
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil, errMalformed
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, errMalformed
		}
		if seen[key] { // last one wins, as in Python's json
			for i := range out {
				if out[i].Key == key {
					out[i].Value = v
				}
			}
			continue
		}
		seen[key] = true
		out = append(out, keyValue{key, v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errMalformed
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errMalformed // trailing data
	}
	return out, nil
}

// readObject reads and decodes a bounded JSON object body.
func readObject(r *http.Request) ([]keyValue, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

// readStringField reads a JSON object body and returns one string member
// ("" when absent or not a string).
func readStringField(r *http.Request, key string) (string, error) {
	kvs, err := readObject(r)
	if err != nil {
		return "", err
	}
	for _, kv := range kvs {
		if kv.Key == key {
			s, _ := kv.Value.(string)
			return s, nil
		}
	}
	return "", nil
}
