// A small real Go program recorded with runtime/pprof: the standard library's JSON and gzip
// code at work (encode records as JSON, compress them, decompress and decode them again), so
// that its CPU profile holds inlined frames (compress/flate.matchLen inlined into findMatch).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
)

type Record struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Score float64           `json:"score"`
	Attrs map[string]string `json:"attrs"`
}

func records(n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{ID: i, Name: strings.Repeat(string(rune('a'+i%26)), 4+i%9),
			Tags:  []string{"alpha", "beta", fmt.Sprint("t", i%17)},
			Score: float64(i) * 0.25,
			Attrs: map[string]string{"k": fmt.Sprint(i % 31), "colour": "blue"}}
	}
	return out
}

func roundTrip(rs []Record) int {
	raw, err := json.Marshal(rs)
	if err != nil {
		panic(err)
	}
	var zipped bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zipped, gzip.BestCompression)
	zw.Write(raw)
	zw.Close()
	zr, err := gzip.NewReader(&zipped)
	if err != nil {
		panic(err)
	}
	back, err := io.ReadAll(zr)
	if err != nil {
		panic(err)
	}
	var again []Record
	if err := json.Unmarshal(back, &again); err != nil {
		panic(err)
	}
	return len(again) + zipped.Len()
}

func main() {
	out := flag.String("cpu", "cpu.pb.gz", "the CPU profile written")
	rounds := flag.Int("rounds", 60, "round trips")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		panic(err)
	}
	pprof.StartCPUProfile(f)
	rs := records(20000)
	total := 0
	for r := 0; r < *rounds; r++ {
		total += roundTrip(rs)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println(total)
}
