// A small seeded generator (mulberry32) for the randomized tests (bus_model.test.js, tests/crash), so that
// a failing sequence can be replayed from its seed. Returns a function giving floats in [0, 1).
'use strict';

function seededRandom(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { seededRandom };
