#!/usr/bin/env node
// gltf_validate.js: run the Khronos glTF validator on GLB files and print,
// for each, one line "FILE: E errors, W warnings, I infos, H hints" and then
// its messages, errors and warnings first.  Exit status 0 when no file has
// an error, 1 when one has, 2 when the validator is not installed or a file
// cannot be read.  '--check' only says whether the validator can be loaded.
//
// The validator is the npm package gltf-validator: make deps installs it
// under build/npm; a global install works too.
'use strict';
const fs = require('fs');
const path = require('path');

function load() {
    const local = path.join(__dirname, '..', 'build', 'npm', 'node_modules',
                            'gltf-validator');
    for (const name of [local, 'gltf-validator']) {
        try {
            return require(name);
        } catch (e) {
            if (e.code !== 'MODULE_NOT_FOUND') throw e;
        }
    }
    return null;
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];

async function main(args) {
    const validator = load();
    if (!validator) {
        console.log('gltf-validator is not installed (make deps installs it ' +
                    'under build/npm)');
        return 2;
    }
    if (args[0] === '--check') {
        console.log('gltf-validator ' + validator.version());
        return 0;
    }
    let status = 0;
    for (const file of args) {
        let bytes;
        try {
            bytes = new Uint8Array(fs.readFileSync(file));
        } catch (e) {
            console.log(`${file}: cannot read: ${e.message}`);
            status = Math.max(status, 2);
            continue;
        }
        // A GLB of worldgen's names no outside file: refuse any.
        const report = await validator.validateBytes(bytes, {
            uri: path.basename(file),
            maxIssues: 0,
            externalResourceFunction: (uri) =>
                Promise.reject(new Error(`external resource ${uri}`)),
        });
        const n = report.issues;
        console.log(`${file}: ${n.numErrors} errors, ${n.numWarnings} ` +
                    `warnings, ${n.numInfos} infos, ${n.numHints} hints`);
        const messages = [...n.messages].sort((a, b) => a.severity - b.severity);
        for (const m of messages)
            console.log(`  ${SEVERITY[m.severity] || m.severity} ${m.code}` +
                        `${m.pointer ? ' at ' + m.pointer : ''}: ${m.message}`);
        if (n.numErrors > 0) status = Math.max(status, 1);
    }
    return status;
}

main(process.argv.slice(2)).then(
    (status) => { process.exitCode = status; },
    (e) => { console.log(`gltf_validate: ${e.stack || e}`); process.exitCode = 2; });
