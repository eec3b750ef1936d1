package objects_test

import (
	"testing"
	"time"

	"repohost/store/objects"
	"repohost/store/objects/objectstest"
)

func TestLocal(t *testing.T) {
	root := t.TempDir()
	l := objects.Local{Root: root}
	objectstest.Run(t, l)
	if err := l.RemoveStaleTemp(0, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}
