// A small real Go program for runtime/pprof: six goroutines (labelled with pprof.Do) doing JSON
// round trips of a nested tree, hashing and sorting strings, and a recursion, under the CPU
// profiler; then a heap profile of what is still allocated.
//
//	go run pprof_work.go -cpu cpu.pb.gz -heap heap.pb.gz
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
)

type node struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Children []*node `json:"children,omitempty"`
}

func build(depth, width, seed int) *node {
	n := &node{Name: fmt.Sprintf("n%d-%d", depth, seed), Value: float64(seed%97) / 7}
	if depth > 0 {
		for k := 0; k < width; k++ {
			n.Children = append(n.Children, build(depth-1, width, seed*31+k))
		}
	}
	return n
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func jsonWork(rounds int) int {
	total := 0
	for r := 0; r < rounds; r++ {
		b, _ := json.Marshal(build(6, 4, r))
		var back node
		_ = json.Unmarshal(b, &back)
		total += len(b) + len(back.Children)
	}
	return total
}

func sortWork(rounds int) int {
	s := 0
	for r := 0; r < rounds; r++ {
		words := make([]string, 0, 20000)
		for i := 0; i < 20000; i++ {
			h := sha256.Sum256([]byte(fmt.Sprint(i * (r + 1))))
			words = append(words, fmt.Sprintf("%x", h[:6]))
		}
		sort.Strings(words)
		s += len(strings.Join(words[:100], ","))
	}
	return s
}

// kept alive until the heap profile is written, so that it has something to show
var retained []*node

func main() {
	cpuPath := flag.String("cpu", "cpu.pb.gz", "CPU profile")
	heapPath := flag.String("heap", "heap.pb.gz", "heap profile")
	flag.Parse()
	runtime.MemProfileRate = 4096
	f, err := os.Create(*cpuPath)
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	res := make([]int, 6)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			kind := []string{"json", "sort", "fib"}[w%3]
			pprof.Do(context.Background(), pprof.Labels("worker", fmt.Sprint(w), "kind", kind), func(context.Context) {
				switch kind {
				case "json":
					res[w] = jsonWork(40)
					mu.Lock()
					retained = append(retained, build(5, 4, w))
					mu.Unlock()
				case "sort":
					res[w] = sortWork(8)
				default:
					res[w] = fib(32)
				}
			})
		}(w)
	}
	wg.Wait()
	pprof.StopCPUProfile()
	f.Close()
	runtime.GC()
	h, err := os.Create(*heapPath)
	if err != nil {
		panic(err)
	}
	if err := pprof.WriteHeapProfile(h); err != nil {
		panic(err)
	}
	h.Close()
	fmt.Println(res, len(retained))
}
