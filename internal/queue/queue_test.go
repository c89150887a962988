package queue

import (
	"errors"
	"testing"
)

// Without amp linked in, nothing is registered: Of says so, and the
// transfers decline.
func TestWithoutAmp(t *testing.T) {
	if _, err := Of(nil); !errors.Is(err, ErrNoLookup) {
		t.Errorf("Of without amp: %v, want ErrNoLookup", err)
	}
	if rc, err := Upload(nil, nil); rc != nil || err != nil {
		t.Errorf("Upload without amp: %v, %v; want nil, nil", rc, err)
	}
	if rc, err := Download(nil, nil); rc != nil || err != nil {
		t.Errorf("Download without amp: %v, %v; want nil, nil", rc, err)
	}
}
