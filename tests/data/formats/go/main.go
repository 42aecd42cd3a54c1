// A small real Go program recorded with runtime/pprof: a CPU profile and a heap profile.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
)

var keep [][]byte

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func buildWords(n int) []string {
	words := make([]string, 0, n)
	for i := 0; i < n; i++ {
		words = append(words, strings.Repeat(string(rune('a'+i%26)), 1+i%13))
	}
	return words
}

func sortWords(words []string) {
	sort.Strings(words)
}

func allocate(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 1024+i%4096))
	}
}

func work() int {
	total := 0
	for round := 0; round < 200; round++ {
		total += fib(28)
		w := buildWords(20000)
		sortWords(w)
		allocate(200)
	}
	return total
}

func main() {
	cpu, _ := os.Create("cpu.pprof")
	pprof.StartCPUProfile(cpu)
	fmt.Println(work())
	pprof.StopCPUProfile()
	cpu.Close()
	runtime.GC()
	heap, _ := os.Create("heap.pprof")
	pprof.WriteHeapProfile(heap)
	heap.Close()
}
