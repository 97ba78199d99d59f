#!/usr/bin/env node
// Compiles contracts/*.sol and contracts/test/*.sol with solc-js (standard JSON) into contracts/build/<Name>.json
// ({contractName, abi, bytecode}). Skips the work when sources, compiler and settings are
// unchanged (hash in build/.inputs-hash). Usage: node contracts/compile.mjs [--force]
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const nodeModules = resolve(here, '..', 'tools', 'node_modules')
const buildDir = join(here, 'build')
const hashFile = join(buildDir, '.inputs-hash')
const require = createRequire(join(nodeModules, 'noop.js'))

// contracts/*.sol and the test-only contracts/test/*.sol (e.g. test/GasBurnerToken.sol).
const sources = {}
for (const dir of ['', 'test/']) {
  for (const name of readdirSync(join(here, dir)).filter((f) => f.endsWith('.sol')).sort()) {
    sources[dir + name] = { content: readFileSync(join(here, dir, name), 'utf8') }
  }
}

const settings = {
  optimizer: { enabled: true, runs: 200 },
  // cancun: OpenZeppelin 5.x needs mcopy; keeps the bytecode usable on current public chains.
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
}

const ozVersion = JSON.parse(readFileSync(join(nodeModules, '@openzeppelin/contracts/package.json'), 'utf8')).version
const solcVersion = JSON.parse(readFileSync(join(nodeModules, 'solc/package.json'), 'utf8')).version
const inputsHash = createHash('sha256')
  .update(JSON.stringify({ sources, settings, ozVersion, solcVersion }))
  .digest('hex')

const force = process.argv.includes('--force')
if (!force && existsSync(hashFile) && readFileSync(hashFile, 'utf8').trim() === inputsHash) {
  console.log('contracts: up to date')
  process.exit(0)
}

// Resolves '@openzeppelin/...' (and any other package import) from tools/node_modules.
function findImports(path) {
  const candidates = [join(nodeModules, path), join(here, path)]
  for (const file of candidates) {
    if (existsSync(file)) return { contents: readFileSync(file, 'utf8') }
  }
  return { error: `import not found: ${path}` }
}

const solc = require('solc')
const output = JSON.parse(
  solc.compile(JSON.stringify({ language: 'Solidity', sources, settings }), { import: findImports })
)
const errors = (output.errors || []).filter((e) => e.severity === 'error')
for (const e of output.errors || []) console.error(e.formattedMessage || e.message)
if (errors.length) process.exit(1)

mkdirSync(buildDir, { recursive: true })
const written = []
for (const file of Object.keys(sources)) {
  for (const [contractName, c] of Object.entries(output.contracts[file] || {})) {
    const artifact = { contractName, sourceName: file, compiler: solcVersion, abi: c.abi, bytecode: '0x' + c.evm.bytecode.object }
    writeFileSync(join(buildDir, `${contractName}.json`), JSON.stringify(artifact, null, 2) + '\n')
    written.push(contractName)
  }
}
writeFileSync(hashFile, inputsHash + '\n')
console.log(`contracts: compiled ${written.join(', ')}`)
