// The paths of what the platform's package (@leveldb-bloom/linux-<cpu>-gnu, an optional
// dependency installed only where its os, cpu and libc fields match, as esbuild and
// biome ship their binaries) holds: the tool, and the library for LD_PRELOAD.
'use strict';
const path = require('path');

const PLATFORMS = { x64: 'linux-x64-gnu', arm64: 'linux-arm64-gnu' };

// The directory of this platform's package; an Error saying why there is none.
function platformDir() {
  const name = process.platform === 'linux' ? PLATFORMS[process.arch] : undefined;
  if (name === undefined) {
    throw new Error(`leveldb-bloom: no package for ${process.platform}-${process.arch} (Linux on x64 and arm64, glibc)`);
  }
  const glibc = process.report && process.report.getReport().header.glibcVersionRuntime;
  if (!glibc) {
    throw new Error('leveldb-bloom: this Linux has no glibc (musl?): the packages are built for glibc');
  }
  try {
    return path.dirname(require.resolve(`@leveldb-bloom/${name}/package.json`));
  } catch (error) {
    throw new Error(`leveldb-bloom: @leveldb-bloom/${name} is not installed: install without --omit=optional (or --no-optional)`);
  }
}

// The leveldb-bloom executable.
function toolPath() {
  return path.join(platformDir(), 'bin', 'leveldb-bloom');
}

// libleveldb_bloom.so.0: the value for LD_PRELOAD.
function libraryPath() {
  return path.join(platformDir(), 'lib', 'libleveldb_bloom.so.0');
}

module.exports = { toolPath, libraryPath };
