// goleveldb-tool: writes and reads a goleveldb database for the tests, so that a
// database written by software nobody here wrote meets this library (and the
// reverse). Built in GOPATH mode from Debian's golang-github-syndtr-goleveldb-dev,
// with no network.
//
//	goleveldb-tool write DIR KEYS   create DIR; put every key of KEYS (value: "v" + key)
//	goleveldb-tool read  DIR KEYS   open DIR; get every key of KEYS, check its value
//
// KEYS is a file of keys, each a 4-byte little-endian length and its bytes. Both
// open the database with goleveldb's bloom filter at 10 bits per key; write uses
// small tables and compacts, so that many tables with filters are written. read
// prints "found N of M" and exits 1 unless every key was found with its value.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"

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

func main() {
	if len(os.Args) != 4 || (os.Args[1] != "write" && os.Args[1] != "read") {
		fmt.Fprintln(os.Stderr, "usage: goleveldb-tool write|read DIR KEYS")
		os.Exit(2)
	}
	dir, keys := os.Args[2], readKeys(os.Args[3])
	options := &opt.Options{Filter: filter.NewBloomFilter(10)}
	if os.Args[1] == "write" {
		options.ErrorIfExist = true
		options.WriteBuffer = 64 * 1024
		options.CompactionTableSize = 64 * 1024
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
	fmt.Printf("found %d of %d\n", found, len(keys))
	if found != len(keys) {
		os.Exit(1)
	}
}
