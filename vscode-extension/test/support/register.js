'use strict'
// Makes `require('vscode')` resolve to the stand-in, as the extension host would provide it.
const Module = require('node:module')
const path = require('node:path')

const standIn = path.join(__dirname, 'vscode.js')
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === 'vscode') return standIn
  return resolve.call(this, request, ...rest)
}

module.exports = require(standIn)
