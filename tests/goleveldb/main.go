// goleveldb-tool: writes and reads a goleveldb database for the tests, so that a
// database written by software nobody here wrote meets this library (and the
// reverse). Built in GOPATH mode from Debian's golang-github-syndtr-goleveldb-dev,
// with no network.
//
//	goleveldb-tool write  DIR KEYS          create DIR; put every key of KEYS (value: "v" + key)
//	goleveldb-tool read   DIR KEYS [ABSENT] open DIR; get every key of KEYS, check its value,
//	                                        and check that no key of ABSENT is found
//	goleveldb-tool filter KEYS              print the filter goleveldb's bloom filter at 10
//	                                        bits per key generates for KEYS, in hex
//
// KEYS and ABSENT are files of keys, each a 4-byte little-endian length and its
// bytes. write and read open the database with goleveldb's bloom filter at 10 bits
// per key; write uses small tables and compacts, so that many tables with filters
// are written. read counts how often that filter answered "absent" and prints
// "found N of M, absent A of B, filter said absent F times"; it exits 1 unless every
// key of KEYS was found with its value and none of ABSENT was found. With
// FILTER_BASE_LG=N in its environment, write gives goleveldb that FilterBaseLg (one
// filter per 2^N bytes of data-block offsets; 11 by default, as LevelDB's).
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

func readKeys(path string) [][]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	var keys [][]byte
	for len(data) > 0 {
		if len(data) < 4 {
			fail(fmt.Errorf("%s: truncated length", path))
		}
		n := binary.LittleEndian.Uint32(data)
		data = data[4:]
		if uint32(len(data)) < n {
			fail(fmt.Errorf("%s: truncated key", path))
		}
		keys = append(keys, data[:n])
		data = data[n:]
	}
	return keys
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "goleveldb-tool:", err)
	os.Exit(1)
}

func value(key []byte) []byte {
	return append([]byte("v"), key...)
}

// countingFilter is goleveldb's bloom filter, counting the "absent" answers of
// Contains: proof that the tables' filters were found under its name and used.
type countingFilter struct {
	filter.Filter
	saidAbsent int
}

func (f *countingFilter) Contains(filter, key []byte) bool {
	found := f.Filter.Contains(filter, key)
	if !found {
		f.saidAbsent++
	}
	return found
}

// printFilter prints in hex the filter goleveldb generates for keys.
func printFilter(keys [][]byte) {
	generator := filter.NewBloomFilter(10).NewGenerator()
	for _, key := range keys {
		generator.Add(key)
	}
	var out util.Buffer
	generator.Generate(&out)
	fmt.Printf("%x\n", out.Bytes())
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: goleveldb-tool write DIR KEYS | read DIR KEYS [ABSENT] | filter KEYS")
	os.Exit(2)
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "filter" {
		printFilter(readKeys(os.Args[2]))
		return
	}
	if len(os.Args) < 4 || (os.Args[1] != "write" && os.Args[1] != "read") ||
		(os.Args[1] == "write" && len(os.Args) != 4) || len(os.Args) > 5 {
		usage()
	}
	dir, keys := os.Args[2], readKeys(os.Args[3])
	counting := &countingFilter{Filter: filter.NewBloomFilter(10)}
	options := &opt.Options{Filter: counting}
	if os.Args[1] == "write" {
		options.ErrorIfExist = true
		options.WriteBuffer = 64 * 1024
		options.CompactionTableSize = 64 * 1024
		if lg, err := strconv.Atoi(os.Getenv("FILTER_BASE_LG")); err == nil {
			options.FilterBaseLg = lg
		}
	} else {
		options.ErrorIfMissing = true
	}
	db, err := leveldb.OpenFile(dir, options)
	if err != nil {
		fail(err)
	}
	defer db.Close()
	if os.Args[1] == "write" {
		for _, key := range keys {
			if err := db.Put(key, value(key), nil); err != nil {
				fail(err)
			}
		}
		if err := db.CompactRange(util.Range{}); err != nil {
			fail(err)
		}
		fmt.Printf("wrote %d keys\n", len(keys))
		return
	}
	found := 0
	for _, key := range keys {
		got, err := db.Get(key, nil)
		if err == nil && bytes.Equal(got, value(key)) {
			found++
		} else {
			fmt.Fprintf(os.Stderr, "missing or wrong: %x (%v)\n", key, err)
		}
	}
	var absentKeys [][]byte
	if len(os.Args) == 5 {
		absentKeys = readKeys(os.Args[4])
	}
	absent := 0
	for _, key := range absentKeys {
		if _, err := db.Get(key, nil); err == leveldb.ErrNotFound {
			absent++
		} else {
			fmt.Fprintf(os.Stderr, "found an absent key: %x (%v)\n", key, err)
		}
	}
	fmt.Printf("found %d of %d, absent %d of %d, filter said absent %d times\n",
		found, len(keys), absent, len(absentKeys), counting.saidAbsent)
	if found != len(keys) || absent != len(absentKeys) {
		os.Exit(1)
	}
}
