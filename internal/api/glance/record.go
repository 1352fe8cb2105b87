package glance

import (
	"bytes"
	"encoding/json"
	"time"

	"hangar/internal/catalog"
)

// StoreID is the one store Hangar reports in Glance's multi-store fields.
const StoreID = "fs"

const timeFormat = "2006-01-02T15:04:05Z"

// orderedJSON writes an object with keys in the order added, since Glance's
// clients print fields in the order they arrive.
type orderedJSON struct {
	buf bytes.Buffer
}

func (o *orderedJSON) add(key string, v any) {
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteString(", ")
	}
	k, _ := marshal(key)
	val, err := marshal(v)
	if err != nil {
		val = []byte("null")
	}
	o.buf.Write(k)
	o.buf.WriteString(": ")
	o.buf.Write(val)
}

func (o *orderedJSON) bytes() json.RawMessage {
	if o.buf.Len() == 0 {
		return []byte("{}")
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes()
}

// marshal is json.Marshal without HTML escaping: Glance's messages carry a
// literal "<br />" and clients compare strings.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func hasData(im *catalog.Image) bool {
	return im.Status == catalog.StatusActive || im.Status == catalog.StatusDeactivated
}

// imageRecord renders an image as Glance does: custom properties first, then
// the core fields in Glance's order.
func imageRecord(im *catalog.Image) json.RawMessage {
	var o orderedJSON
	for _, p := range im.Properties {
		o.add(p.Key, p.Value)
	}
	o.add("name", im.Name)
	o.add("disk_format", im.DiskFormat)
	o.add("container_format", im.ContainerFormat)
	o.add("visibility", im.Visibility)
	o.add("size", im.Size)
	o.add("virtual_size", im.VirtualSize)
	o.add("status", im.Status)
	o.add("checksum", im.Checksum)
	o.add("protected", im.Protected)
	o.add("min_ram", im.MinRAM)
	o.add("min_disk", im.MinDisk)
	o.add("owner", im.Owner)
	o.add("os_hidden", im.OSHidden)
	o.add("os_hash_algo", im.OSHashAlgo)
	o.add("os_hash_value", im.OSHashValue)
	o.add("id", im.ID)
	o.add("created_at", im.CreatedAt.UTC().Format(timeFormat))
	o.add("updated_at", im.UpdatedAt.UTC().Format(timeFormat))
	tags := im.Tags
	if tags == nil {
		tags = []string{}
	}
	o.add("tags", tags)
	o.add("self", "/v2/images/"+im.ID)
	o.add("file", "/v2/images/"+im.ID+"/file")
	o.add("schema", "/v2/schemas/image")
	if hasData(im) {
		o.add("stores", StoreID)
	}
	return o.bytes()
}

func memberRecord(m *catalog.Member) map[string]string {
	return map[string]string{
		"created_at": m.CreatedAt.UTC().Format(timeFormat),
		"image_id":   m.ImageID,
		"member_id":  m.MemberID,
		"schema":     "/v2/schemas/member",
		"status":     m.Status,
		"updated_at": m.UpdatedAt.UTC().Format(timeFormat),
	}
}

func now() time.Time { return time.Now().UTC() }
