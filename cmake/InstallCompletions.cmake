# Installs the bash, zsh and fish completions where each shell, as its distribution ships it,
# looks for them under the install prefix. Run when installing (install(CODE) in
# CMakeLists.txt), because `cmake --install --prefix` may name another prefix than the one the
# build was configured with. RCOORD_COMPLETIONS is the source directory; RCOORD_ZSH_COMPLETION_DIR
# and RCOORD_FISH_COMPLETION_DIR, when not empty, replace the choice below (relative to the
# prefix, or absolute).
#
#   bash  PREFIX/share/bash-completion/completions. bash-completion loads a command's
#         completion on first use from share/bash-completion/completions under each of
#         XDG_DATA_DIRS (default /usr/local/share:/usr/share) and under ~/.local/share.
#   zsh   /usr: share/zsh/vendor-completions, which Debian's zsh has in fpath for packages.
#         Any other prefix: share/zsh/site-functions, zsh's own place, which its fpath holds
#         for /usr/local.
#   fish  /usr/local, where fish is installed (/etc/fish exists): /etc/fish/completions. fish
#         reads no directory under /usr/local unless XDG_DATA_DIRS names /usr/local/share (a
#         desktop session may, a login on a console or over ssh does not); it always reads its
#         system-wide directory in /etc, the one meant for what the administrator adds.
#         Otherwise: share/fish/vendor_completions.d, which fish reads under /usr/share and
#         ~/.local/share (and under /usr/local/share when XDG_DATA_DIRS names it); nothing is
#         made in /etc for a shell that is not there.
set(prefix "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "(.)/+$" "\\1" prefix "${prefix}")

set(zsh_dir "${RCOORD_ZSH_COMPLETION_DIR}")
if(zsh_dir STREQUAL "")
  if(prefix STREQUAL "/usr")
    set(zsh_dir "share/zsh/vendor-completions")
  else()
    set(zsh_dir "share/zsh/site-functions")
  endif()
endif()
set(fish_dir "${RCOORD_FISH_COMPLETION_DIR}")
if(fish_dir STREQUAL "")
  if(prefix STREQUAL "/usr/local" AND IS_DIRECTORY "$ENV{DESTDIR}/etc/fish")
    set(fish_dir "/etc/fish/completions")
  else()
    set(fish_dir "share/fish/vendor_completions.d")
  endif()
endif()
foreach(dir_var IN ITEMS zsh_dir fish_dir)
  if(NOT IS_ABSOLUTE "${${dir_var}}")
    set(${dir_var} "${prefix}/${${dir_var}}")
  endif()
endforeach()

file(INSTALL DESTINATION "${prefix}/share/bash-completion/completions" TYPE FILE
     FILES "${RCOORD_COMPLETIONS}/rcoord.bash" RENAME rcoord)
file(INSTALL DESTINATION "${zsh_dir}" TYPE FILE FILES "${RCOORD_COMPLETIONS}/_rcoord")
file(INSTALL DESTINATION "${fish_dir}" TYPE FILE FILES "${RCOORD_COMPLETIONS}/rcoord.fish")
