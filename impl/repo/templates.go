package repo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"repohost/impl/apierr"
)

// The built-in templates a new repository can start from. The set is small
// on purpose: the texts live here, not on disk, so a server needs no extra
// files and tests see exactly what a client gets.

// readmeTemplates are the names accepted in CreateRepoOption.readme.
var readmeTemplates = []string{"Default"}

// gitignoreTemplates maps a template name to its text.
var gitignoreTemplates = map[string]string{
	"Go": `# Compiled binaries and libraries
*.exe
*.exe~
*.dll
*.so
*.dylib

# Test binaries and coverage output
*.test
*.out
coverage.*

# Workspace files
go.work
go.work.sum

# Local environment
.env
`,
	"Python": `# Byte-compiled and optimised files
__pycache__/
*.py[cod]
*$py.class

# C extensions
*.so

# Packaging
build/
dist/
*.egg-info/
.eggs/
wheels/

# Virtual environments
.venv/
venv/
env/

# Tools
.pytest_cache/
.mypy_cache/
.ruff_cache/
.coverage
htmlcov/
.tox/
`,
	"Node": `# Dependencies
node_modules/
jspm_packages/

# Logs
logs/
*.log
npm-debug.log*
yarn-debug.log*
yarn-error.log*

# Build output and caches
dist/
build/
coverage/
.cache/
.eslintcache
*.tsbuildinfo

# Local environment
.env
.env.local
`,
	"Rust": `# Build output
/target/
debug/

# Backup files from rustfmt
**/*.rs.bk

# Debugger information on Windows
*.pdb
`,
	"Java": `# Compiled classes and archives
*.class
*.jar
*.war
*.ear
*.nar

# Logs
*.log

# Build tools
target/
build/
.gradle/

# Crash logs of the virtual machine
hs_err_pid*
replay_pid*
`,
	"C": `# Objects and libraries
*.o
*.obj
*.a
*.lib
*.so
*.so.*
*.dylib
*.dll

# Executables
*.exe
*.out
*.app

# Debug files
*.dSYM/
*.su
*.idb
*.pdb
`,
}

// licenseTemplates maps an SPDX identifier to its text. {{year}} and
// {{holder}} are filled in when the repository is created.
var licenseTemplates = map[string]string{
	"MIT": `MIT License

Copyright (c) {{year}} {{holder}}

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`,
	"ISC": `ISC License

Copyright (c) {{year}} {{holder}}

Permission to use, copy, modify, and/or distribute this software for any
purpose with or without fee is hereby granted, provided that the above
copyright notice and this permission notice appear in all copies.

THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
`,
	"BSD-2-Clause": `BSD 2-Clause License

Copyright (c) {{year}}, {{holder}}

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
`,
	"BSD-3-Clause": `BSD 3-Clause License

Copyright (c) {{year}}, {{holder}}

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
`,
}

// lookup finds name in templates case-insensitively and returns the
// canonical name.
func lookup[T any](templates map[string]T, name string) (string, bool) {
	for canonical := range templates {
		if strings.EqualFold(canonical, name) {
			return canonical, true
		}
	}
	return "", false
}

func templateNames[T any](templates map[string]T) string {
	out := make([]string, 0, len(templates))
	for n := range templates {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// checkReadme validates the readme template name ("" means the default).
func checkReadme(name string) error {
	if name == "" {
		return nil
	}
	for _, n := range readmeTemplates {
		if strings.EqualFold(n, name) {
			return nil
		}
	}
	return apierr.Validation("readme template does not exist [name: %s], available templates: %s",
		name, strings.Join(readmeTemplates, ", "))
}

// readme is the text of the Default readme.
func readme(name, description string) string {
	if description == "" {
		return "# " + name + "\n"
	}
	return "# " + name + "\n\n" + description + "\n"
}

// gitignore joins the comma-separated gitignore templates into one file, each
// part headed by its name; "" when none is asked for.
func gitignore(list string) (string, error) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		canonical, ok := lookup(gitignoreTemplates, name)
		if !ok {
			return "", apierr.Validation("gitignore template does not exist [name: %s], available templates: %s",
				name, templateNames(gitignoreTemplates))
		}
		if seen[canonical] {
			continue
		}
		seen[canonical] = true
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# ---> %s\n%s", canonical, gitignoreTemplates[canonical])
	}
	return b.String(), nil
}

// license renders the named license for holder; "" when name is empty.
func license(name, holder string, now time.Time) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil
	}
	canonical, ok := lookup(licenseTemplates, name)
	if !ok {
		return "", apierr.Validation("license template does not exist [name: %s], available templates: %s",
			name, templateNames(licenseTemplates))
	}
	r := strings.NewReplacer("{{year}}", strconv.Itoa(now.Year()), "{{holder}}", holder)
	return r.Replace(licenseTemplates[canonical]), nil
}
